import { EXIT, type ExitCode } from "./exit-codes.js";

/**
 * A failure the CLI explains in one line (`parley: <message>`, or `{"error": {code, message}}`
 * with `--json`). By default a usage error (exit 2, code `usage`): a bad flag value, a missing
 * setting; `exitCode` and `code` name another cause.
 */
export class CliError extends Error {
  override name = "CliError";
  readonly exitCode: ExitCode;
  readonly code: string;

  constructor(message: string, options: { exitCode?: ExitCode; code?: string } = {}) {
    super(message);
    this.exitCode = options.exitCode ?? EXIT.usage;
    this.code = options.code ?? "usage";
  }
}
