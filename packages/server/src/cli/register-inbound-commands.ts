import type { Command } from "commander";
import { inboundCreate } from "./inbound-create.js";
import { inboundList } from "./inbound-list.js";
import { inboundDelete, inboundRotateToken, inboundSetEnabled } from "./inbound-manage.js";
import { API_HELP } from "./api-help.js";
import { runCommand } from "./run-command.js";

/** `parley inbound create|list|rotate-token|enable|disable|delete`. */
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

  inbound
    .command("rotate-token")
    .description(
      "give an inbound webhook a new token and print its new URLs (the old ones stop at once)",
    )
    .argument("<id>", "inbound webhook id")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(inboundRotateToken));

  for (const [name, enabled, what] of [
    ["enable", true, "let an inbound webhook post again"],
    ["disable", false, "stop an inbound webhook: its URLs are refused until it is enabled"],
  ] as const)
    inbound
      .command(name)
      .description(what)
      .argument("<id>", "inbound webhook id")
      .option("--json", "print JSON")
      .addHelpText("after", API_HELP)
      .action(runCommand(inboundSetEnabled(enabled)));

  inbound
    .command("delete")
    .description("delete an inbound webhook: its URLs stop working; what it posted stays")
    .argument("<id>", "inbound webhook id")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(inboundDelete));
}
