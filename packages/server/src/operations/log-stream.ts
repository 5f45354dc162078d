import pretty from "pino-pretty";
import type { Config } from "../config/load-config.js";

/** Where the log goes, with `isTTY` as process.stdout has it. */
export interface LogOutput extends NodeJS.WritableStream {
  readonly isTTY?: boolean;
  readonly fd?: number;
}

/**
 * The stream log lines are written to: one JSON object per line for a log collector (systemd's
 * journal, a container runtime), or, for a person at a terminal, one readable line each (time,
 * level, message, then the fields). `auto` picks by whether the output is a terminal.
 *
 * Both write synchronously, so a log line written before the start banner is printed before it,
 * and the banner stays the last thing a start prints.
 */
export function logStream(
  format: Config["logFormat"],
  output: LogOutput = process.stdout,
): NodeJS.WritableStream {
  const readable = format === "pretty" || (format === "auto" && output.isTTY === true);
  if (!readable) return output;
  return pretty({
    colorize: output.isTTY === true,
    sync: true,
    destination: output.fd ?? output,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "pid,hostname",
    singleLine: true,
  });
}
