import { EVENT_NAMES, paginate, WEBHOOK_TEST } from "@parley/client";
import { apiFromEnv } from "./api-from-env.js";
import { CliError } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";
import { EXIT } from "./exit-codes.js";
import { printJson } from "./format-table.js";
import { parseChoice } from "./parse-choice.js";
import { parseTimeout, waitForAttempt } from "./wait-for-attempt.js";
import { parseId } from "./webhooks-test.js";

const TRIGGERABLE = [...EVENT_NAMES, WEBHOOK_TEST] as const;

/**
 * `parley webhooks trigger <event>`: sends the catalogue's sample of that event (as `stripe
 * trigger` does) to the endpoints named with `--webhook`, or to every enabled endpoint that
 * subscribes to it; with `--wait`, follows each to its first attempt.
 */
export async function webhooksTrigger(
  io: CliIo,
  eventText: string,
  options: { webhook?: string[]; wait?: boolean; timeout?: string; json?: boolean },
): Promise<void> {
  const event = parseChoice(eventText, TRIGGERABLE, "event") as (typeof TRIGGERABLE)[number];
  const named = options.webhook?.flatMap((value) => value.split(",")).map((value) => value.trim());
  const ids = named?.filter(Boolean).map((value) => parseId(value, "--webhook"));
  const timeout = parseTimeout(options.timeout);
  const { api } = apiFromEnv(io.env);
  const targets =
    ids ??
    (await paginate.all(api, "GET /api/admin/webhooks", { limit: 200 }))
      .filter((webhook) => webhook.enabled && subscribes(webhook.events, event))
      .map((webhook) => webhook.id);
  if (targets.length === 0)
    throw new CliError(
      `no enabled endpoint subscribes to ${event}: name one with --webhook <id> (a test goes to any endpoint)`,
      { exitCode: EXIT.notFound, code: "not_found" },
    );
  const results = [];
  for (const id of [...new Set(targets)]) {
    const { data: queued } = await api("POST /api/admin/webhooks/{id}/test", { id, event });
    if (!options.wait) {
      results.push({ webhookId: id, ...queued });
      if (!options.json)
        io.out(
          `Queued a sample ${event} to webhook ${id} as delivery ${queued.deliveryId}` +
            (queued.held ? " (held: the endpoint is disabled)" : "."),
        );
      continue;
    }
    const delivery = await waitForAttempt(io, api, { id, deliveryId: queued.deliveryId }, timeout);
    results.push(delivery);
    const last = delivery.attemptHistory.at(-1)!;
    const outcome = last.responseStatus === null ? last.error : `answered ${last.responseStatus}`;
    if (!options.json)
      io.out(
        `Sample ${event} to webhook ${id}, delivery ${delivery.id}: ${delivery.status} (${outcome}, ${last.durationMs} ms)`,
      );
    if (delivery.status !== "SUCCESS") process.exitCode = EXIT.failed;
  }
  if (options.json) printJson(io.out, results);
}

/** Whether a subscription (names, `*`, prefix wildcards) hears `event`. */
function subscribes(events: readonly string[], event: string): boolean {
  return events.some((entry) =>
    entry.endsWith("*") ? event.startsWith(entry.slice(0, -1)) : entry === event,
  );
}
