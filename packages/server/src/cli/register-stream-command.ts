import type { Command } from "commander";
import { runCommand } from "./run-command.js";
import { streamRoom } from "./stream-room.js";

/** `parley stream --room <id>`. */
export function registerStreamCommand(program: Command): void {
  program
    .command("stream")
    .description("tail a room live: messages, joins, leaves and who is present")
    .requiredOption("--room <id>", "the room to follow (you must be a member)")
    .option("--after <messageId>", "first print the messages after this one")
    .option("--json", "print each frame as JSON")
    .addHelpText(
      "after",
      "\nConnects to the stream at PARLEY_URL (default http://localhost:8080) with the token in PARLEY_TOKEN (any user's).",
    )
    .action(
      runCommand((io, options: { room: string; after?: string; json?: boolean }) =>
        streamRoom(io, options),
      ),
    );
}
