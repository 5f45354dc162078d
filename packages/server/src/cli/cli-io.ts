import { startProgress, type Progress } from "./progress.js";

/** Where a command reads its environment and writes its output; the real process by default. */
export interface CliIo {
  env: NodeJS.ProcessEnv;
  out(line: string): void;
  err(line: string): void;
  /**
   * How wide tables may be: the terminal's width when stdout is one, else `COLUMNS` when set,
   * else unlimited (a pipe gets whole cells; scripts should use `--json`).
   */
  columns: number | undefined;
  /** A spinner line on stderr while something waits; silent when stderr is not a terminal. */
  progress(label: string): Progress;
}

export const processIo: CliIo = {
  env: process.env,
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  get columns() {
    if (process.stdout.isTTY) return process.stdout.columns;
    const columns = Number(process.env.COLUMNS);
    return Number.isInteger(columns) && columns > 0 ? columns : undefined;
  },
  progress: (label) => startProgress(process.stderr, label),
};
