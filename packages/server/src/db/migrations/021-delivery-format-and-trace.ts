import type { Kysely, Migration } from "kysely";

/**
 * Outbound delivery semantics (docs/webhooks.md, "CloudEvents" and "Trace context"):
 * - `webhooks.payload_format`: "parley" (the envelope as queued), "cloudevents" (structured mode)
 *   or "cloudevents-binary"; applied to the frozen envelope at each attempt.
 * - `webhooks.trace_context`: 1 when attempts carry a W3C `traceparent`.
 * - `webhook_deliveries.trace_parent` / `trace_state`: the trace of the request that caused the
 *   event (its `traceparent`, whose span is the request's), written by the fan-out in the same
 *   statement as the delivery; null for rows queued before, or outside any request.
 */
export const deliveryFormatAndTrace: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable("webhooks")
      .addColumn("payload_format", "text", (c) => c.notNull().defaultTo("parley"))
      .execute();
    await db.schema
      .alterTable("webhooks")
      .addColumn("trace_context", "integer", (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable("webhook_deliveries").addColumn("trace_parent", "text").execute();
    await db.schema.alterTable("webhook_deliveries").addColumn("trace_state", "text").execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    await db.schema.alterTable("webhook_deliveries").dropColumn("trace_state").execute();
    await db.schema.alterTable("webhook_deliveries").dropColumn("trace_parent").execute();
    await db.schema.alterTable("webhooks").dropColumn("trace_context").execute();
    await db.schema.alterTable("webhooks").dropColumn("payload_format").execute();
  },
};
