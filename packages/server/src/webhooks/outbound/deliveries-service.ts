import type { AppContext } from "../../app-context.js";
import type { DeliveryStatus } from "../../db/schema.js";
import { AppError } from "../../errors/app-error.js";
import type { DeliverableEvent } from "../../events/event-catalogue.js";
import { decodeCursor, toPage, type Page } from "../../http/pagination.js";
import { findDelivery, listAttempts, listDeliveries } from "./deliveries-repository.js";
import { findWebhook } from "./endpoints-repository.js";
import {
  toDeliveryDetail,
  toDeliverySummary,
  type DeliveryDetail,
  type DeliverySummary,
} from "./webhook-views.js";

export interface DeliveryListQuery {
  status?: DeliveryStatus | undefined;
  event?: DeliverableEvent | undefined;
  limit: number;
  cursor?: string | undefined;
}

async function requireWebhook(ctx: AppContext, webhookId: number): Promise<void> {
  if (!(await findWebhook(ctx.db, webhookId)))
    throw new AppError("not_found", `no webhook ${webhookId}`);
}

/** The delivery log of one endpoint, newest first. */
export async function listEndpointDeliveries(
  ctx: AppContext,
  webhookId: number,
  query: DeliveryListQuery,
): Promise<Page<DeliverySummary>> {
  const beforeId = decodeCursor(query.cursor);
  await requireWebhook(ctx, webhookId);
  const rows = await listDeliveries(ctx.db, webhookId, {
    status: query.status,
    event: query.event,
    beforeId,
    limit: query.limit,
  });
  return toPage(rows, query.limit, toDeliverySummary);
}

/** One delivery with its payload and every attempt; 404 also for a delivery of another endpoint. */
export async function getEndpointDelivery(
  ctx: AppContext,
  webhookId: number,
  deliveryId: number,
): Promise<DeliveryDetail> {
  const row = await findDelivery(ctx.db, webhookId, deliveryId);
  if (!row) {
    await requireWebhook(ctx, webhookId);
    throw new AppError("not_found", `webhook ${webhookId} has no delivery ${deliveryId}`);
  }
  return toDeliveryDetail(row, await listAttempts(ctx.db, deliveryId));
}

/**
 * Queues a new delivery with the original body text byte for byte, so the receiver sees the
 * same envelope (including its original `timestamp`) and, with the same secret, the same
 * signature. Allowed whatever the original's state; the original is left as it is.
 */
export async function redeliver(
  ctx: AppContext,
  webhookId: number,
  deliveryId: number,
): Promise<{ deliveryId: number }> {
  const newId = await ctx.db.transaction().execute(async (trx) => {
    const original = await findDelivery(trx, webhookId, deliveryId);
    if (!original) {
      if (!(await findWebhook(trx, webhookId)))
        throw new AppError("not_found", `no webhook ${webhookId}`);
      throw new AppError("not_found", `webhook ${webhookId} has no delivery ${deliveryId}`);
    }
    return ctx.spine.enqueueOne(trx, webhookId, original.event as DeliverableEvent, original.body);
  });
  ctx.spine.afterCommit([], 1);
  return { deliveryId: newId };
}
