import type { AppContext } from "../../../app-context.js";
import { AppError } from "../../../errors/app-error.js";
import { redeliver } from "./deliveries-service.js";
import { findDeliveryWebhookId, findEventFirstDelivery } from "./deliveries-repository.js";

export interface QueuedRedelivery {
  webhookId: number;
  deliveryId: number;
}

/** Redelivers a delivery named by its id alone (its endpoint looked up): same bytes, new delivery. */
export async function redeliverById(
  ctx: AppContext,
  deliveryId: number,
): Promise<QueuedRedelivery> {
  const webhookId = await findDeliveryWebhookId(ctx.db, deliveryId);
  if (webhookId === undefined) throw new AppError("not_found", `no delivery ${deliveryId}`);
  const queued = await redeliver(ctx, webhookId, deliveryId);
  return { webhookId, deliveryId: queued.deliveryId };
}

/**
 * Sends an event again by its id, which is unique per event and endpoint: a redelivery of its
 * first delivery (every later one, a redelivery or a recovery, carries the same bytes and id).
 * 404 when no delivery of it is left (they are kept 30 days).
 */
export async function resendEvent(
  ctx: AppContext,
  eventId: string,
): Promise<QueuedRedelivery & { eventId: string }> {
  const first = await findEventFirstDelivery(ctx.db, eventId);
  if (first === undefined) throw new AppError("not_found", `no delivery of event ${eventId}`);
  const queued = await redeliver(ctx, first.webhookId, first.deliveryId);
  return { eventId, webhookId: first.webhookId, deliveryId: queued.deliveryId };
}
