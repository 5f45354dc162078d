import type { AppContext } from "../../../app-context.js";
import { keysetSlice, type KeysetSlice } from "../../../db/keyset-slice.js";
import type { DeliveryStatus } from "../../../db/schema.js";
import { AppError } from "../../../errors/app-error.js";
import type { DeliverableEvent } from "../../../events/event-catalogue.js";
import { parseInstant } from "../../../time/parse-instant.js";
import {
  countRecoverable,
  findDelivery,
  listAttempts,
  listDeliveries,
  listRedeliveries,
  recoverDeliveries,
  searchDeliveries,
} from "./deliveries-repository.js";
import {
  countMissingEvents,
  replayMissingEvents,
} from "../delivery-engine/replay-missing-events.js";
import { findWebhook } from "./endpoints-repository.js";
import {
  toDeliveryDetail,
  toDeliverySummary,
  type DeliveryDetail,
  type DeliverySearchItem,
  type DeliverySummary,
} from "./webhook-views.js";

export interface DeliveryListQuery {
  status?: DeliveryStatus | undefined;
  event?: DeliverableEvent | undefined;
  /** The last id of the previous page: this page holds older (smaller) ids. */
  beforeId?: number | undefined;
  limit: number;
}

async function requireWebhook(ctx: AppContext, webhookId: number) {
  const webhook = await findWebhook(ctx.db, webhookId);
  if (!webhook) throw new AppError("not_found", `no webhook ${webhookId}`);
  return webhook;
}

/** Most redeliveries a delivery's view lists. */
const REDELIVERIES_SHOWN = 20;

/** The delivery log of one endpoint, newest first. */
export async function listEndpointDeliveries(
  ctx: AppContext,
  webhookId: number,
  query: DeliveryListQuery,
): Promise<KeysetSlice<DeliverySummary>> {
  const webhook = await requireWebhook(ctx, webhookId);
  const rows = await listDeliveries(ctx.db, webhookId, {
    status: query.status,
    event: query.event,
    beforeId: query.beforeId,
    limit: query.limit,
  });
  const context = {
    endpointEnabled: webhook.enabled === 1,
    maxAttempts: ctx.config.webhookMaxAttempts,
  };
  return keysetSlice(rows, query.limit, (row) => toDeliverySummary(row, context));
}

/** One delivery with its payload and every attempt; 404 also for a delivery of another endpoint. */
export async function getEndpointDelivery(
  ctx: AppContext,
  webhookId: number,
  deliveryId: number,
): Promise<DeliveryDetail> {
  const webhook = await requireWebhook(ctx, webhookId);
  const row = await findDelivery(ctx.db, webhookId, deliveryId);
  if (!row) throw new AppError("not_found", `webhook ${webhookId} has no delivery ${deliveryId}`);
  return toDeliveryDetail(row, {
    attempts: await listAttempts(ctx.db, deliveryId),
    webhook: { name: webhook.name, url: webhook.url, enabled: webhook.enabled === 1 },
    redeliveries: await listRedeliveries(ctx.db, deliveryId, REDELIVERIES_SHOWN),
    maxAttempts: ctx.config.webhookMaxAttempts,
  });
}

/**
 * Queues a new delivery with the original body text byte for byte, so the receiver sees the
 * same envelope (including its original `timestamp`) and, with the same secret, the same
 * signature. Allowed whatever the original's state; the original is left as it is, and the two
 * are linked (`redeliveryOf` on the new one, `redeliveries` on the original).
 */
export async function redeliver(
  ctx: AppContext,
  webhookId: number,
  deliveryId: number,
): Promise<{ deliveryId: number }> {
  const newId = await ctx.database.transaction(async (tx) => {
    const original = await findDelivery(tx.db, webhookId, deliveryId);
    if (!original) {
      if (!(await findWebhook(tx.db, webhookId)))
        throw new AppError("not_found", `no webhook ${webhookId}`);
      throw new AppError("not_found", `webhook ${webhookId} has no delivery ${deliveryId}`);
    }
    return tx.enqueue({
      webhookId,
      event: original.event as DeliverableEvent,
      body: original.body,
      roomId: original.room_id,
      messageId: original.message_id,
      // The attempts of a redelivery continue the trace of the event it repeats.
      trace:
        original.trace_parent === null
          ? null
          : { traceParent: original.trace_parent, traceState: original.trace_state },
      ...(original.event_id === null ? {} : { eventId: original.event_id }),
      redeliveryOf: original.id,
    });
  });
  return { deliveryId: newId };
}

export interface DeliverySearchQuery {
  webhookId?: number | undefined;
  status?: DeliveryStatus | undefined;
  event?: DeliverableEvent | undefined;
  eventId?: string | undefined;
  roomId?: number | undefined;
  messageId?: number | undefined;
  since?: string | undefined;
  until?: string | undefined;
  /** The last id of the previous page: this page holds older (smaller) ids. */
  beforeId?: number | undefined;
  limit: number;
}

/** A date-time of a query, read as the request validator checked it: an instant, never NaN. */
function instant(text: string | undefined, field: string): number | undefined {
  if (text === undefined) return undefined;
  const at = parseInstant(text);
  if (at === undefined)
    throw new AppError("validation_failed", `${field} must be an RFC 3339 date-time`, { field });
  return at;
}

function timeRange(since: string | undefined, until: string | undefined) {
  const from = instant(since, "since");
  const to = instant(until, "until");
  if (from !== undefined && to !== undefined && from >= to)
    throw new AppError("invalid_time_range", "since must be before until", { field: "since" });
  return { since: from, until: to };
}

/** The delivery log across every endpoint, newest first (GET /api/admin/deliveries). */
export async function searchAllDeliveries(
  ctx: AppContext,
  query: DeliverySearchQuery,
): Promise<KeysetSlice<DeliverySearchItem>> {
  const rows = await searchDeliveries(ctx.db, {
    webhookId: query.webhookId,
    status: query.status,
    event: query.event,
    eventId: query.eventId,
    roomId: query.roomId,
    messageId: query.messageId,
    ...timeRange(query.since, query.until),
    beforeId: query.beforeId,
    limit: query.limit,
  });
  const maxAttempts = ctx.config.webhookMaxAttempts;
  return keysetSlice(rows, query.limit, ({ webhook_name, webhook_enabled, ...row }) => ({
    ...toDeliverySummary(row, { endpointEnabled: webhook_enabled === 1, maxAttempts }),
    webhookName: webhook_name,
  }));
}

export interface RecoverInput {
  since: string;
  until?: string | undefined;
  statuses?: Array<"FAILED" | "EXHAUSTED"> | undefined;
  /** Count what would be queued, and queue nothing. */
  dryRun?: boolean | undefined;
}

/**
 * Redelivers, in one transaction, each event of the endpoint first queued in [since, until)
 * (`until` defaults to now) whose latest delivery is in a state of `statuses` (default
 * EXHAUSTED): one copy per event, with the same body and event id, at most 10,000 per call (call
 * again for more: an event already queued again is skipped while its copy is pending). A copy
 * made by a redelivery or a recovery is never recovered as an event of its own, so recovering a
 * range again queues only what failed again since. The dispatchers are woken after the commit.
 * A dry run answers how many a call would queue now, and queues nothing.
 */
export async function recover(
  ctx: AppContext,
  webhookId: number,
  input: RecoverInput,
): Promise<{ queued: number }> {
  const now = ctx.now();
  const range = timeRange(input.since, input.until);
  const statuses: DeliveryStatus[] = [...new Set(input.statuses ?? ["EXHAUSTED" as const])];
  const queued = await ctx.database.transaction(async (tx) => {
    if (!(await findWebhook(tx.db, webhookId)))
      throw new AppError("not_found", `no webhook ${webhookId}`);
    const filter = { statuses, since: range.since!, until: range.until ?? now };
    if (input.dryRun) return countRecoverable(tx.db, webhookId, filter);
    const n = await recoverDeliveries(tx.db, webhookId, filter, now);
    if (n > 0) tx.deliveriesDue();
    return n;
  });
  return { queued };
}

export interface ReplayMissingInput {
  since: string;
  until?: string | undefined;
  /** Count what would be queued, and queue nothing. */
  dryRun?: boolean | undefined;
}

/**
 * Sends the endpoint, in one transaction, every event of [since, until) (`until` defaults to now)
 * that its subscription hears now and that was never queued to it: missed while it was disabled,
 * filtered out by a room list since changed, or before it existed (replay-missing-events.ts). Each
 * goes with the event id and envelope it would have had, in event order, at most 10,000 per call
 * (call again: what was queued is not missing any more). Events are kept as long as deliveries
 * (PARLEY_DELIVERY_RETENTION_DAYS). A dry run answers how many a call would queue now.
 */
export async function replayMissing(
  ctx: AppContext,
  webhookId: number,
  input: ReplayMissingInput,
): Promise<{ queued: number }> {
  const now = ctx.now();
  const range = timeRange(input.since, input.until);
  const dialect = ctx.dialect;
  const queued = await ctx.database.transaction(async (tx) => {
    if (!(await findWebhook(tx.db, webhookId)))
      throw new AppError("not_found", `no webhook ${webhookId}`);
    const window = { since: range.since!, until: range.until ?? now };
    if (input.dryRun) return countMissingEvents(tx.db, dialect, webhookId, window);
    const n = await replayMissingEvents(tx.db, dialect, webhookId, window, now);
    if (n > 0) tx.deliveriesDue();
    return n;
  });
  return { queued };
}
