import type { Command } from "commander";
import { inboundCreate } from "./inbound-create.js";
import { inboundList } from "./inbound-list.js";
import { API_HELP } from "./api-help.js";
import { runCommand } from "./run-command.js";

/** `parley inbound create|list`. */
export function registerInboundCommands(program: Command): void {
  const inbound = program
    .command("inbound")
    .description("inbound webhooks: URLs that post into a room");

  inbound
    .command("create")
    .description(
      "create an inbound webhook and print its URLs, one per sender format (shown only once)",
    )
    .requiredOption("--room <id>", "the room it posts into")
    .requiredOption("--name <displayName>", "the sender name its messages show")
    .option("--avatar-url <url>", "the sender avatar its messages show")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(inboundCreate));

  inbound
    .command("list")
    .description("list inbound webhooks")
    .option("--room <id>", "only this room's")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(inboundList));
}
