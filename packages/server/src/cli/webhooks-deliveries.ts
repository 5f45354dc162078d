import {
  paginate,
  type DeliverableEvent,
  type DeliveryStatus,
  type DeliverySummary,
} from "@parley/client";
import { apiFromEnv } from "./api-from-env.js";
import type { CliIo } from "./cli-io.js";
import { formatTable, printJson } from "./format-table.js";
import { parseId } from "./webhooks-test.js";

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
    for (const line of formatTable(data.attemptHistory, [
      ["attempt", (a) => a.attempt],
      ["started", (a) => a.startedAt],
      ["ms", (a) => a.durationMs],
      ["status", (a) => a.responseStatus],
      ["error", (a) => a.error],
    ])) {
      io.out(`  ${line}`);
    }
    return;
  }

  const params = {
    id,
    status: options.status as DeliveryStatus | undefined,
    event: options.event as DeliverableEvent | undefined,
    limit: Number(options.limit ?? 20),
  };
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
  for (const line of formatTable(deliveries, [
    ["id", (d) => d.id],
    ["event", (d) => d.event],
    ["status", (d) => d.status],
    ["attempts", (d) => d.attempts],
    ["last", (d) => d.lastResponseStatus],
    ["created", (d) => d.createdAt],
    ["next attempt", (d) => d.nextAttemptAt],
  ])) {
    io.out(line);
  }
  if (nextCursor !== null) io.out("(more: --all shows every delivery)");
}
