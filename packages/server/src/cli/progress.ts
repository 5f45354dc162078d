export interface Progress {
  /** Replaces the text after the spinner. */
  update(label: string): void;
  /** Clears the line; the caller prints the outcome itself. */
  stop(): void;
}

export interface ProgressStream {
  isTTY?: boolean;
  write(chunk: string): unknown;
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const CLEAR_LINE = "\r\x1b[K";

/**
 * A one-line spinner with a label and the seconds waited, redrawn in place. Only on a terminal:
 * piped or redirected output gets nothing, so logs and scripts stay clean.
 */
export function startProgress(stream: ProgressStream, label: string, intervalMs = 100): Progress {
  if (!stream.isTTY) return { update() {}, stop() {} };
  const started = Date.now();
  let frame = 0;
  let text = label;
  const draw = () => {
    const seconds = Math.floor((Date.now() - started) / 1000);
    stream.write(`${CLEAR_LINE}${FRAMES[frame++ % FRAMES.length]} ${text} (${seconds}s)`);
  };
  draw();
  const timer = setInterval(draw, intervalMs);
  timer.unref();
  let stopped = false;
  return {
    update(next) {
      text = next;
    },
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      stream.write(CLEAR_LINE);
    },
  };
}
