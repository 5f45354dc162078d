import {
  EVENT_NAMES,
  WEBHOOK_TEST,
  WEBHOOK_VERIFICATION,
  paginate,
  type DeliverableEvent,
  type DeliverySummary,
} from "@parley/client";
import { DELIVERY_STATUSES } from "@parley/client/wire";
import { apiFromEnv } from "./api-from-env.js";
import { CliError } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";
import { formatTable, printJson } from "./format-table.js";
import { parseChoice } from "./parse-choice.js";
import { parseId } from "./webhooks-test.js";

/** The event filter also takes the test event, which is in the log but not subscribable. */
const LOG_EVENTS = [...EVENT_NAMES, WEBHOOK_TEST, WEBHOOK_VERIFICATION] as const;

export interface WebhooksDeliveriesOptions {
  status?: string;
  event?: string;
  limit?: string;
  all?: boolean;
  json?: boolean;
}

/**
 * `parley webhooks deliveries <id>`: the endpoint's delivery log, newest first (one page of
 * `--limit`, or `--all`); `parley webhooks deliveries <id> <deliveryId>` shows one delivery with
 * its payload and every attempt.
 */
export async function webhooksDeliveries(
  io: CliIo,
  idText: string,
  deliveryIdText: string | undefined,
  options: WebhooksDeliveriesOptions,
): Promise<void> {
  const id = parseId(idText, "webhook id");
  const limit = Number(options.limit ?? 20);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200)
    throw new CliError(`--limit must be a whole number from 1 to 200, got "${options.limit}"`);
  const params = {
    id,
    status:
      options.status === undefined
        ? undefined
        : parseChoice(options.status, DELIVERY_STATUSES, "--status"),
    event:
      options.event === undefined
        ? undefined
        : (parseChoice(options.event, LOG_EVENTS, "--event") as DeliverableEvent),
    limit,
  };
  const { api } = apiFromEnv(io.env);

  if (deliveryIdText !== undefined) {
    const deliveryId = parseId(deliveryIdText, "delivery id");
    const { data } = await api("GET /api/admin/webhooks/{id}/deliveries/{deliveryId}", {
      id,
      deliveryId,
    });
    if (options.json) return printJson(io.out, data);
    io.out(`Delivery ${data.id}: ${data.event}, ${data.status} after ${data.attempts} attempt(s)`);
    io.out(`  queued ${data.createdAt}; next attempt ${data.nextAttemptAt ?? "none"}`);
    io.out(`  payload: ${JSON.stringify(data.payload)}`);
    if (data.attemptHistory.length === 0) return io.out("  no attempt yet");
    for (const a of data.attemptHistory) {
      const answer =
        a.responseStatus === null ? `error: ${a.error}` : `answered ${a.responseStatus}`;
      io.out(`  attempt ${a.attempt} at ${a.startedAt}, ${a.durationMs} ms: ${answer}`);
      if (a.responseBody !== null && a.responseBody !== "")
        io.out(`    response body: ${a.responseBody}`);
    }
    return;
  }

  let deliveries: DeliverySummary[];
  let nextCursor: string | null = null;
  if (options.all) {
    deliveries = await paginate.all(api, "GET /api/admin/webhooks/{id}/deliveries", params);
  } else {
    const { data } = await api("GET /api/admin/webhooks/{id}/deliveries", params);
    deliveries = data.items;
    nextCursor = data.nextCursor;
  }
  if (options.json) return printJson(io.out, deliveries);
  if (deliveries.length === 0) return io.out(`No deliveries for webhook ${id}.`);
  for (const line of formatTable(
    deliveries,
    [
      ["id", (d) => d.id],
      ["event", (d) => d.event],
      ["status", (d) => d.status],
      ["attempts", (d) => d.attempts],
      ["last", (d) => d.lastResponseStatus],
      ["created", (d) => d.createdAt],
      ["next attempt", (d) => d.nextAttemptAt],
    ],
    io.columns,
  )) {
    io.out(line);
  }
  if (nextCursor !== null) io.out("(more: --all shows every delivery)");
}
