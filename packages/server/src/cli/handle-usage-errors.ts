import type { Command } from "commander";
import { failureJson } from "./cli-failure.js";
import { processIo, type CliIo } from "./cli-io.js";
import { EXIT } from "./exit-codes.js";

/**
 * Commander's own refusals (an unknown command or flag, a missing argument or required option, a
 * group named without its command) exit 2, the usage status, instead of commander's 1; with
 * `--json` anywhere on the line they print `{"error": {"code": "usage", "message"}}` on stdout and
 * no help. Help and `--version` still exit 0. Call before adding commands: they inherit it.
 */
export function handleUsageErrors(
  program: Command,
  argv: readonly string[],
  io: CliIo = processIo,
): Command {
  const json = argv.includes("--json");
  let message: string | undefined;
  return program
    .configureOutput({
      outputError: (text, write) => {
        message = text.trim().replace(/^error: /, "");
        if (!json) write(text);
      },
      // With --json, the help commander prints after an error (or for a bare group) is dropped.
      writeErr: (text) => {
        if (!json) process.stderr.write(text);
      },
    })
    .exitOverride((error) => {
      if (error.exitCode === 0) process.exit(0);
      if (json)
        io.out(
          failureJson({
            exitCode: EXIT.usage,
            code: "usage",
            message: message ?? "a command is needed: see parley --help",
          }),
        );
      process.exit(EXIT.usage);
    });
}
