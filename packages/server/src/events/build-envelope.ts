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

/**
 * The envelope of `event` split around its `webhookId`: `prefix + id + suffix` is exactly
 * `buildEnvelope(event, enqueuedAt, id, data)` for every endpoint id, so one statement can build
 * every subscribed endpoint's body in the database (the id is the only per-endpoint part).
 */
export function envelopeAround<E extends DeliverableEvent>(
  event: E,
  enqueuedAt: number,
  data: EventDataMap[E],
): { prefix: string; suffix: string } {
  const head = JSON.stringify({ event, timestamp: new Date(enqueuedAt).toISOString() });
  return {
    prefix: `${head.slice(0, -1)},"webhookId":`,
    suffix: `,"data":${JSON.stringify(data)}}`,
  };
}
