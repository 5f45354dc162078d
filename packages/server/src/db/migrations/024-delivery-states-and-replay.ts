import { sql, type Kysely, type Migration } from "kysely";
import { dialectOf, idColumnType } from "../dialect.js";

/**
 * Delivery states that explain themselves, redeliveries linked both ways, and replay of missed
 * events (docs/webhooks.md, "Endpoint states", "Redeliveries" and "Replay missing events"):
 * - `webhooks.disabled_delivery_id` / `disabled_attempt`: the attempt whose failure disabled the
 *   endpoint (410 Gone, or the one that met the auto-disable rule); null for a manual disable.
 * - `webhook_deliveries.redelivery_of`: the delivery a redelivery or a recovery copied; indexed
 *   (partial: only copies have one) so a delivery finds its redeliveries.
 * - `webhook_events`: every event that endpoints may hear (outside direct messages), written by
 *   the fan-out in the same statement as its deliveries, whether or not any endpoint heard it, so
 *   that an endpoint can be sent what it missed (disabled, filtered out, created later) with the
 *   event id and body it would have had. Kept as long as deliveries (the retention job).
 */
export const deliveryStatesAndReplay: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema.alterTable("webhooks").addColumn("disabled_delivery_id", "bigint").execute();
    await db.schema.alterTable("webhooks").addColumn("disabled_attempt", "integer").execute();
    await db.schema.alterTable("webhook_deliveries").addColumn("redelivery_of", "bigint").execute();
    await db.schema
      .createIndex("webhook_deliveries_redelivery_of")
      .on("webhook_deliveries")
      .column("redelivery_of")
      .where(sql.ref("redelivery_of"), "is not", null)
      .execute();
    await db.schema
      .createTable("webhook_events")
      .addColumn("id", idColumnType(dialectOf(db)), (c) => c.primaryKey())
      .addColumn("event", "varchar(64)", (c) => c.notNull())
      // "evt_" + the event's 16 characters: + the endpoint id (10 digits) is its event id there.
      .addColumn("event_id_prefix", "varchar(32)", (c) => c.notNull())
      // The envelope up to the endpoint's id and after it: prefix + id + suffix is the body.
      .addColumn("envelope_prefix", "text", (c) => c.notNull())
      .addColumn("envelope_suffix", "text", (c) => c.notNull())
      .addColumn("room_id", "bigint")
      .addColumn("message_id", "bigint")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("trace_parent", "text")
      .addColumn("trace_state", "text")
      .execute();
    await db.schema
      .createIndex("webhook_events_created")
      .on("webhook_events")
      .column("created_at")
      .execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    await db.schema.dropTable("webhook_events").execute();
    await db.schema.dropIndex("webhook_deliveries_redelivery_of").execute();
    await db.schema.alterTable("webhook_deliveries").dropColumn("redelivery_of").execute();
    await db.schema.alterTable("webhooks").dropColumn("disabled_attempt").execute();
    await db.schema.alterTable("webhooks").dropColumn("disabled_delivery_id").execute();
  },
};
