import { cliFailure, failureJson } from "./cli-failure.js";
import { processIo, type CliIo } from "./cli-io.js";

/**
 * Runs a command's action and turns its failure into one line on stderr (`parley: <code>:
 * <detail>` for an API error, `parley: cannot reach ...` when the server does not answer) or, when
 * the command was given `--json`, `{"error": {"code", "message"}}` on stdout; the exit status
 * says the cause (exit-codes.ts).
 */
export function runCommand<A extends unknown[]>(
  action: (io: CliIo, ...args: A) => Promise<void>,
  io: CliIo = processIo,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await action(io, ...args);
    } catch (error) {
      const failure = cliFailure(error);
      if (args.some(wantsJson)) io.out(failureJson(failure));
      else io.err(`parley: ${failure.message}`);
      process.exitCode = failure.exitCode;
    }
  };
}

/** Commander hands an action its options as a plain object: `{json: true}` with `--json`. */
function wantsJson(arg: unknown): boolean {
  return typeof arg === "object" && arg !== null && (arg as { json?: unknown }).json === true;
}
