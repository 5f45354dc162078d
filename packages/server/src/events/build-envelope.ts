import type { DeliverableEvent, EventDataMap } from "./event-catalogue.js";

/**
 * The exact body bytes of one delivery: compact JSON of `{event, timestamp, webhookId, data}`,
 * `timestamp` being the enqueue time. Built once at enqueue and stored, so retries and
 * redeliveries send the same bytes with the same signature.
 */
export function buildEnvelope<E extends DeliverableEvent>(
  event: E,
  enqueuedAt: number,
  webhookId: number,
  data: EventDataMap[E],
): string {
  return JSON.stringify({ event, timestamp: new Date(enqueuedAt).toISOString(), webhookId, data });
}
