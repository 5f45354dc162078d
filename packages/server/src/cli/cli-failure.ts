import { NetworkError, RequestError, TimeoutError } from "@parley/client";
import { CliError } from "./cli-error.js";
import { EXIT, exitCodeOfStatus, type ExitCode } from "./exit-codes.js";

/** Why a command failed: its exit code, a stable code for scripts and one line for people. */
export interface CliFailure {
  exitCode: ExitCode;
  /** The API's problem code (`not_found`, `invalid_secret`...), or the CLI's own (`usage`...). */
  code: string;
  message: string;
}

/**
 * The failure a thrown error stands for: an API answer by its status and problem code, a server
 * out of reach as `unreachable` (or `timeout`), a CliError as it says. Anything else is a bug and
 * is thrown on. Credentials never reach the message: @parley/client redacts its errors.
 */
export function cliFailure(error: unknown): CliFailure {
  if (error instanceof RequestError) {
    const exitCode = exitCodeOfStatus(error.status);
    if (error.problem)
      return {
        exitCode,
        code: error.problem.code,
        message: `${error.problem.code}: ${error.problem.detail ?? error.problem.title}`,
      };
    return {
      exitCode,
      code: `http_${error.status}`,
      message: `the server answered ${error.status} to ${error.request.method.toUpperCase()} ${error.request.url}`,
    };
  }
  if (error instanceof NetworkError) {
    return {
      exitCode: EXIT.unavailable,
      code: error instanceof TimeoutError ? "timeout" : "unreachable",
      message: `cannot reach ${new URL(error.request.url).origin}: ${error.message.replace(/^.* failed: /, "")}`,
    };
  }
  if (error instanceof CliError)
    return { exitCode: error.exitCode, code: error.code, message: error.message };
  throw error;
}

/** A failure as `--json` prints it. */
export function failureJson(failure: CliFailure): string {
  return JSON.stringify({ error: { code: failure.code, message: failure.message } });
}
