import {
  EVENT_NAMES,
  WEBHOOK_TEST,
  WEBHOOK_VERIFICATION,
  type DeliverableEvent,
} from "@parley/client";
import { DELIVERY_STATUSES, type SearchDeliveriesParams } from "@parley/client/wire";
import { apiFromEnv } from "./api-from-env.js";
import { CliError } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";
import { formatTable, printJson } from "./format-table.js";
import { parseChoice } from "./parse-choice.js";
import { parseTime } from "./parse-time.js";
import { parseId } from "./webhooks-test.js";

const LOG_EVENTS = [...EVENT_NAMES, WEBHOOK_TEST, WEBHOOK_VERIFICATION] as const;

export interface DeliveriesSearchOptions {
  webhook?: string;
  status?: string;
  event?: string;
  eventId?: string;
  room?: string;
  message?: string;
  since?: string;
  until?: string;
  limit?: string;
  json?: boolean;
}

/** `parley deliveries search`: every endpoint's delivery log, newest first, filtered. */
export async function deliveriesSearch(io: CliIo, options: DeliveriesSearchOptions): Promise<void> {
  const limit = Number(options.limit ?? 50);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200)
    throw new CliError(`--limit must be a whole number from 1 to 200, got "${options.limit}"`);
  const params: SearchDeliveriesParams = { limit };
  if (options.webhook !== undefined) params.webhookId = parseId(options.webhook, "--webhook");
  if (options.status !== undefined)
    params.status = parseChoice(options.status, DELIVERY_STATUSES, "--status");
  if (options.event !== undefined)
    params.event = parseChoice(options.event, LOG_EVENTS, "--event") as DeliverableEvent;
  if (options.eventId !== undefined) params.eventId = options.eventId.trim();
  if (options.room !== undefined) params.roomId = parseId(options.room, "--room");
  if (options.message !== undefined) params.messageId = parseId(options.message, "--message");
  if (options.since !== undefined) params.since = parseTime(options.since, "--since");
  if (options.until !== undefined) params.until = parseTime(options.until, "--until");
  const { api } = apiFromEnv(io.env);
  const { data } = await api("GET /api/admin/deliveries", params);
  if (options.json) return printJson(io.out, data.items);
  if (data.items.length === 0) return io.out("No deliveries match.");
  for (const line of formatTable(
    data.items,
    [
      ["id", (d) => d.id],
      ["webhook", (d) => `${d.webhookId} ${d.webhookName}`],
      ["event", (d) => d.event],
      ["status", (d) => d.status],
      ["attempts", (d) => d.attempts],
      ["last", (d) => d.lastResponseStatus],
      ["created", (d) => d.createdAt],
      ["event id", (d) => d.eventId],
    ],
    io.columns,
  )) {
    io.out(line);
  }
  if (data.nextCursor !== null) io.out(`(more: raise --limit, up to 200, or narrow the filters)`);
}
