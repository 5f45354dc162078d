import { RequestError } from "./api.js";

/** How often live pages ask the server again. */
export const POLL_MS = 1000;

/**
 * Runs `tick` every `intervalMs` while `root` is in the document (the page is still shown), skipping
 * ticks while the tab is hidden. `tick` answers false to stop. A failed tick is passed to `onError`
 * (which answers false to stop, e.g. when the token stopped working) and polling goes on.
 */
export function pollWhileShown(
  root: HTMLElement,
  tick: () => Promise<boolean | void>,
  onError: (error: unknown) => boolean,
  intervalMs = POLL_MS,
): void {
  const next = (): void => {
    setTimeout(() => void run(), intervalMs);
  };
  const run = async (): Promise<void> => {
    if (!root.isConnected) return;
    if (document.hidden) return next();
    try {
      if ((await tick()) === false) return;
    } catch (error) {
      if (!onError(error)) return;
    }
    next();
  };
  next();
}

/** A conditional GET's 304: what was shown is still current. */
export function notModified(error: unknown): boolean {
  return error instanceof RequestError && error.status === 304;
}
