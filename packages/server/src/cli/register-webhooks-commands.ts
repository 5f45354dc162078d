import type { Command } from "commander";
import { EVENT_NAMES } from "@parley/client";
import { runCommand } from "./run-command.js";
import { webhooksCreate } from "./webhooks-create.js";
import { webhooksDeliveries } from "./webhooks-deliveries.js";
import { webhooksList } from "./webhooks-list.js";
import { webhooksListen } from "./webhooks-listen.js";
import { webhooksTest } from "./webhooks-test.js";

const API_HELP =
  "\nCalls the API at PARLEY_URL (default http://localhost:8080) with the admin token in PARLEY_TOKEN.";

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `parley webhooks listen|list|create|test|deliveries`. */
export function registerWebhooksCommands(program: Command): void {
  const webhooks = program
    .command("webhooks")
    .description("outbound webhooks: receive, manage, inspect");

  webhooks
    .command("listen")
    .description("run a local receiver that verifies each delivery and prints its event")
    .option("--port <port>", "port to listen on (0 picks a free one)", "9000")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--secret <secret>", "the endpoint's secret [env PARLEY_WEBHOOK_SECRET]")
    .option(
      "--forward-to <url>",
      "re-send verified deliveries (same bytes and headers) to this URL",
    )
    .action(runCommand(webhooksListen));

  webhooks
    .command("list")
    .description("list outbound endpoints")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(webhooksList));

  webhooks
    .command("create")
    .description("register an outbound endpoint")
    .requiredOption("--name <name>", "label shown in the delivery log")
    .requiredOption("--url <url>", "the receiver's https URL")
    .requiredOption(
      "--events <names>",
      `comma-separated, repeatable: ${EVENT_NAMES.join(", ")}`,
      collect,
    )
    .option(
      "--secret <secret>",
      "HMAC key, 16 to 1024 characters (generated and shown once if omitted)",
    )
    .option("--disabled", "create it disabled")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(webhooksCreate));

  webhooks
    .command("test")
    .description("queue a WEBHOOK_TEST delivery to an endpoint")
    .argument("<id>", "webhook id")
    .option(
      "--wait",
      "wait for the first attempt and print its outcome (exit 1 unless it succeeded)",
    )
    .option("--timeout <seconds>", "how long --wait waits", "30")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(webhooksTest));

  webhooks
    .command("deliveries")
    .description("show an endpoint's delivery log, newest first, or one delivery in full")
    .argument("<id>", "webhook id")
    .argument("[deliveryId]", "show this delivery with its payload and attempts")
    .option("--status <status>", "PENDING, SUCCESS, FAILED or EXHAUSTED")
    .option("--event <event>", "only this event")
    .option("--limit <n>", "deliveries per page", "20")
    .option("--all", "every page")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(webhooksDeliveries));
}
