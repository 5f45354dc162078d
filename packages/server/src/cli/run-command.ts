import { NetworkError, RequestError } from "@parley/client";
import { CliError } from "./cli-error.js";
import { processIo, type CliIo } from "./cli-io.js";

/**
 * Runs a command's action and turns its failure into one line on stderr and exit status 1:
 * `parley: <code>: <detail>` for an API error, `parley: cannot reach ...` when the server does not
 * answer. Credentials never reach the output: errors from @parley/client are already redacted.
 */
export function runCommand<A extends unknown[]>(
  action: (io: CliIo, ...args: A) => Promise<void>,
  io: CliIo = processIo,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await action(io, ...args);
    } catch (error) {
      io.err(`parley: ${describeFailure(error)}`);
      process.exitCode = 1;
    }
  };
}

export function describeFailure(error: unknown): string {
  if (error instanceof RequestError) {
    if (error.problem)
      return `${error.problem.code}: ${error.problem.detail ?? error.problem.title}`;
    return `the server answered ${error.status} to ${error.request.method.toUpperCase()} ${error.request.url}`;
  }
  if (error instanceof NetworkError) {
    return `cannot reach ${new URL(error.request.url).origin}: ${error.message.replace(/^.* failed: /, "")}`;
  }
  if (error instanceof CliError) return error.message;
  throw error;
}
