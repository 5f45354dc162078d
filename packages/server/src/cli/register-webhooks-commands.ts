import type { Command } from "commander";
import { EVENT_NAMES } from "@parley/client";
import { DELIVERY_STATUSES } from "@parley/client/wire";
import { API_HELP } from "./api-help.js";
import { addEndpointSettingFlags } from "./endpoint-settings.js";
import { runCommand } from "./run-command.js";
import { webhooksCreate } from "./webhooks-create.js";
import { deliveriesSearch } from "./deliveries-search.js";
import { eventsResend } from "./events-resend.js";
import { webhooksDelete } from "./webhooks-delete.js";
import { webhooksDeliveries } from "./webhooks-deliveries.js";
import { webhooksHealth } from "./webhooks-health.js";
import { webhooksList } from "./webhooks-list.js";
import { webhooksListen } from "./webhooks-listen.js";
import { webhooksRecover } from "./webhooks-recover.js";
import { webhooksRedeliver } from "./webhooks-redeliver.js";
import { webhooksReplayMissing } from "./webhooks-replay-missing.js";
import { webhooksRotateSecret } from "./webhooks-rotate-secret.js";
import { webhooksTest } from "./webhooks-test.js";
import { webhooksTrigger } from "./webhooks-trigger.js";
import { webhooksUpdate } from "./webhooks-update.js";
import { webhooksVerify } from "./webhooks-verify.js";

const collect = (value: string, previous: string[] = []) => [...previous, value];

const SETTINGS_EXAMPLE = `
Example:
  parley webhooks create --name billing --url https://example.com/hooks \\
    --events 'MESSAGE_*,ROOM_CREATED' --scheme standard-webhooks --rooms general,42 \\
    --header 'X-Team: billing' --rate-limit 20 --ordering room
  parley webhooks create --from-file endpoint.json --secret "$SECRET"   # flags win over the file
`;

const TIME_HELP =
  "an ISO date or time (2026-11-20T08:00:00Z), or a duration ago (90s, 15m, 12h, 7d)";

/**
 * `parley webhooks listen|list|create|update|delete|test|deliveries|redeliver|rotate-secret|
 * recover|health`, `parley deliveries search` and `parley events resend`.
 */
export function registerWebhooksCommands(program: Command): void {
  const webhooks = program
    .command("webhooks")
    .description("outbound webhooks: receive, manage, inspect");

  webhooks
    .command("listen")
    .description("run a local receiver that verifies each delivery and prints its event")
    .option("--port <port>", "port to listen on (0 picks a free one)", "9000")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option(
      "--secret <secret>",
      "the endpoint's secret [env PARLEY_WEBHOOK_SECRET]; repeatable: each verifies (the old and new secret during a rotation)",
      collect,
    )
    .option(
      "--public-key <whpk>",
      "the endpoint's public key (whpk_...): verifies v1a signatures of a standard-webhooks-ed25519 endpoint",
    )
    .option(
      "--scheme <schemes>",
      "signature schemes to accept, comma-separated: standard-webhooks, standard-webhooks-ed25519, parley " +
        "(default: standard-webhooks and parley with --secret, standard-webhooks-ed25519 with --public-key; " +
        "use standard-webhooks for a standard-webhooks or both endpoint: parley has no timestamp, so no replay protection)",
    )
    .option(
      "--events <names>",
      "only these events are printed and forwarded (others are answered 204): comma-separated, repeatable, names or wildcards such as MESSAGE_*; with --register, what the endpoint subscribes to (default *)",
      collect,
    )
    .option(
      "--forward-to <url>",
      "re-send verified deliveries (same bytes and headers) to this URL",
    )
    .option(
      "--register",
      "create a temporary endpoint pointing here through the API (PARLEY_URL, PARLEY_TOKEN), deleted on exit (Ctrl-C, SIGTERM); the secret is generated unless --secret gives it",
    )
    .option(
      "--public-url <url>",
      "with --register: the address Parley sends to, such as a tunnel's (default this listener's http://host:port/)",
    )
    .option("--name <name>", "with --register: the endpoint's name")
    .option("--json", "print each delivery as one line of JSON (the banner goes to stderr)")
    .addHelpText(
      "after",
      "\nWith --register, the server must be able to send to the address: PARLEY_WEBHOOK_ALLOW_HTTP=true and" +
        "\nPARLEY_WEBHOOK_ALLOW_PRIVATE_NETWORKS=true on a development server, or --public-url with a tunnel." +
        "\nExits 2 for a usage error (see parley --help for every exit code).",
    )
    .action(runCommand(webhooksListen));

  webhooks
    .command("list")
    .description("list outbound endpoints")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(webhooksList));

  addEndpointSettingFlags(
    webhooks
      .command("create")
      .description("register an outbound endpoint: every setting as a flag, or --from-file"),
    "create",
  )
    .option("--disabled", "create it disabled")
    .option("--json", "print JSON")
    .addHelpText("after", `${SETTINGS_EXAMPLE}${API_HELP}`)
    .action(runCommand(webhooksCreate));

  addEndpointSettingFlags(
    webhooks
      .command("update")
      .description("change an endpoint: only the settings given")
      .argument("<id>", "webhook id"),
    "update",
  )
    .option("--enable", "enable it (its held deliveries go out)")
    .option("--disable", "disable it (its deliveries are held)")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(webhooksUpdate));

  webhooks
    .command("delete")
    .description("delete an endpoint; its queued deliveries are dropped")
    .argument("<id>", "webhook id")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(webhooksDelete));

  webhooks
    .command("test")
    .description("queue a WEBHOOK_TEST delivery (or another event's sample) to an endpoint")
    .argument("<id>", "webhook id")
    .option("--event <event>", "send this event's sample instead of WEBHOOK_TEST")
    .option(
      "--wait",
      "wait for the first attempt and print its outcome (exit 1 unless it succeeded)",
    )
    .option("--timeout <seconds>", "how long --wait waits", "30")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(webhooksTest));

  webhooks
    .command("trigger")
    .description(
      "send the sample of an event type (as the catalogue shows it) to the endpoints that subscribe to it, or to --webhook",
    )
    .argument("<event>", `an event name: ${EVENT_NAMES.join(", ")}, or WEBHOOK_TEST`)
    .option(
      "--webhook <id>",
      "only to this endpoint (repeatable, comma-separated); default every enabled endpoint subscribed to the event",
      collect,
    )
    .option(
      "--wait",
      "wait for each first attempt and print its outcome (exit 1 unless every one succeeded)",
    )
    .option("--timeout <seconds>", "how long --wait waits for each", "30")
    .option("--json", "print JSON: the queued deliveries, or with --wait the deliveries")
    .addHelpText("after", API_HELP)
    .action(runCommand(webhooksTrigger));

  webhooks
    .command("verify")
    .description(
      "send the ownership check's WEBHOOK_VERIFICATION challenge to an endpoint again (PARLEY_WEBHOOK_VERIFY_OWNERSHIP)",
    )
    .argument("<id>", "webhook id")
    .option(
      "--wait",
      "wait for the first attempt and print its outcome and the endpoint's state (exit 1 unless verified)",
    )
    .option("--timeout <seconds>", "how long --wait waits", "30")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(webhooksVerify));

  webhooks
    .command("redeliver")
    .description(
      "queue a delivery's body again, as a new delivery: redeliver <deliveryId>, or <id> <deliveryId>",
    )
    .argument(
      "<deliveryId>",
      "the delivery to send again (or the webhook id, then the delivery id)",
    )
    .argument("[deliveryId]", "the delivery, when the webhook id came first")
    .option(
      "--wait",
      "wait for the first attempt and print its outcome (exit 1 unless it succeeded)",
    )
    .option("--timeout <seconds>", "how long --wait waits", "30")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(webhooksRedeliver));

  webhooks
    .command("deliveries")
    .description("show an endpoint's delivery log, newest first, or one delivery in full")
    .argument("<id>", "webhook id")
    .argument("[deliveryId]", "show this delivery with its payload and attempts")
    .option("--status <status>", `one of ${DELIVERY_STATUSES.join(", ")}`)
    .option("--event <event>", "only this event")
    .option("--limit <n>", "deliveries per page", "20")
    .option("--all", "every page")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(webhooksDeliveries));

  webhooks
    .command("rotate-secret")
    .description(
      "give an endpoint a new signing secret, printed once; the old one keeps signing during the overlap",
    )
    .argument("<id>", "webhook id")
    .option("--secret <secret>", "the new secret, 16 to 1024 characters (generated if omitted)")
    .option(
      "--overlap <seconds>",
      "how long the old secret also signs, 0 to 604800 (default 86400)",
    )
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(webhooksRotateSecret));

  webhooks
    .command("recover")
    .description("queue again, once each, the events of a time range whose delivery failed")
    .argument("<id>", "webhook id")
    .requiredOption("--since <time>", `from: ${TIME_HELP}`)
    .option("--until <time>", `to (not included; default now): ${TIME_HELP}`)
    .option(
      "--status <statuses>",
      "FAILED, EXHAUSTED or both, comma-separated, repeatable (default EXHAUSTED)",
      collect,
    )
    .option("--dry-run", "only count what would be queued; queue nothing")
    .option("--json", "print JSON ({queued}, or {wouldQueue} with --dry-run)")
    .addHelpText("after", API_HELP)
    .action(runCommand(webhooksRecover));

  webhooks
    .command("replay-missing")
    .description(
      "send the events of a time range that the endpoint's subscription hears now and that it never got (disabled, filtered out, created later); counts first",
    )
    .argument("<id>", "webhook id")
    .requiredOption("--since <time>", `from: ${TIME_HELP}`)
    .option("--until <time>", `to (not included; default now): ${TIME_HELP}`)
    .option("--dry-run", "only count them; send nothing")
    .option(
      "--yes",
      "send without asking (a terminal is asked to confirm the count; a script must say --yes)",
    )
    .option("--json", "print JSON ({queued}, or {wouldQueue} with --dry-run)")
    .addHelpText("after", API_HELP)
    .action(runCommand(webhooksReplayMissing));

  webhooks
    .command("health")
    .description("an endpoint's last 24 hours: success rate, latency, last error, state")
    .argument("<id>", "webhook id")
    .option("--json", "print the health object as JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(webhooksHealth));

  const events = program.command("events").description("events, by their id (evt_...)");
  events
    .command("resend")
    .description(
      "send an event again, same bytes and event id, to the endpoint that got it (as a new delivery)",
    )
    .argument("<eventId>", "the event id (evt_...), as deliveries show it")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(eventsResend));

  const deliveries = program
    .command("deliveries")
    .description("outbound deliveries across every endpoint");
  deliveries
    .command("search")
    .description("find deliveries across endpoints, newest first")
    .option("--webhook <id>", "only this endpoint")
    .option("--status <status>", `one of ${DELIVERY_STATUSES.join(", ")}`)
    .option("--event <event>", "only this event")
    .option("--event-id <eventId>", "only this event id (evt_...)")
    .option("--room <roomId>", "only events of this room")
    .option("--message <messageId>", "only events of this message")
    .option("--since <time>", `queued at or after: ${TIME_HELP}`)
    .option("--until <time>", `queued before: ${TIME_HELP}`)
    .option("--limit <n>", "at most this many, 1 to 200", "50")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(deliveriesSearch));
}
