import { sql, type Kysely, type Migration } from "kysely";
import { dialectOf } from "../dialect.js";

/**
 * Operating endpoints over time (docs/webhooks.md, "Operating endpoints"): signature schemes, wildcard and room filters,
 * custom headers, rate caps, secret rotation, disable reasons and health counters on `webhooks`;
 * a stable `event_id` plus the `room_id` / `message_id` the delivery search filters on, on
 * `webhook_deliveries`; the headers of each attempt and its endpoint, on `webhook_attempts`.
 *
 * Deliveries queued before this migration get an event id made of their own id (`evt_` + 26
 * digits): stable, unique, and never produced by the generator, whose ids start with a time.
 */
export const operatingEndpoints: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    const webhookColumns: Array<[string, string, boolean?]> = [
      ["signature_scheme", "varchar(32)"],
      ["event_prefixes", "text"],
      ["room_filter", "text"],
      ["headers_ciphertext", "text"],
      ["max_per_second", "integer"],
      ["rate_next_at", "bigint"],
      ["previous_secret_ciphertext", "text"],
      ["previous_secret_expires_at", "bigint"],
      ["disabled_reason", "varchar(16)"],
      ["disabled_at", "bigint"],
      ["failing_since", "bigint"],
      ["consecutive_failures", "integer"],
      ["last_success_at", "bigint"],
      ["last_failure_at", "bigint"],
      ["last_error", "text"],
    ];
    for (const [name, type] of webhookColumns) {
      await db.schema
        .alterTable("webhooks")
        .addColumn(name, sql.raw(type), (c) =>
          name === "signature_scheme"
            ? c.notNull().defaultTo("parley")
            : name === "consecutive_failures"
              ? c.notNull().defaultTo(0)
              : c,
        )
        .execute();
    }
    // Endpoints disabled before reasons existed were disabled by an admin.
    await db
      .updateTable("webhooks")
      .set({ disabled_reason: "manual", disabled_at: sql.ref("updated_at") })
      .where("enabled", "=", 0)
      .execute();

    await db.schema.alterTable("webhook_deliveries").addColumn("event_id", "varchar(32)").execute();
    await db.schema.alterTable("webhook_deliveries").addColumn("room_id", "bigint").execute();
    await db.schema.alterTable("webhook_deliveries").addColumn("message_id", "bigint").execute();
    const legacyId =
      dialectOf(db) === "postgres"
        ? sql`'evt_' || lpad(id::text, 26, '0')`
        : sql`'evt_' || printf('%026d', id)`;
    await db.updateTable("webhook_deliveries").set({ event_id: legacyId }).execute();

    await db.schema.alterTable("webhook_attempts").addColumn("webhook_id", "bigint").execute();
    await db.schema.alterTable("webhook_attempts").addColumn("request_headers", "text").execute();
    await db.schema.alterTable("webhook_attempts").addColumn("response_headers", "text").execute();

    // The delivery search (GET /api/admin/deliveries) seeks through these, newest first.
    await db.schema
      .createIndex("webhook_deliveries_event_id")
      .on("webhook_deliveries")
      .column("event_id")
      .execute();
    await db.schema
      .createIndex("webhook_deliveries_room")
      .on("webhook_deliveries")
      .columns(["room_id", "id"])
      .where(sql.ref("room_id"), "is not", null)
      .execute();
    await db.schema
      .createIndex("webhook_deliveries_message")
      .on("webhook_deliveries")
      .columns(["message_id", "id"])
      .where(sql.ref("message_id"), "is not", null)
      .execute();
    // Failed and exhausted rows are the few an operator looks for; SUCCESS rows are most.
    await db.schema
      .createIndex("webhook_deliveries_unhappy")
      .on("webhook_deliveries")
      .columns(["status", "id"])
      .where(sql.ref("status"), "in", ["FAILED", "EXHAUSTED"])
      .execute();
    await db.schema
      .createIndex("webhook_deliveries_endpoint_unhappy")
      .on("webhook_deliveries")
      .columns(["webhook_id", "status", "id"])
      .where(sql.ref("status"), "in", ["FAILED", "EXHAUSTED"])
      .execute();
    // Health: one endpoint's attempts of the last 24 hours.
    await db.schema
      .createIndex("webhook_attempts_endpoint_time")
      .on("webhook_attempts")
      .columns(["webhook_id", "started_at"])
      .execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    for (const index of [
      "webhook_attempts_endpoint_time",
      "webhook_deliveries_endpoint_unhappy",
      "webhook_deliveries_unhappy",
      "webhook_deliveries_message",
      "webhook_deliveries_room",
      "webhook_deliveries_event_id",
    ])
      await db.schema.dropIndex(index).execute();
    for (const column of ["response_headers", "request_headers", "webhook_id"])
      await db.schema.alterTable("webhook_attempts").dropColumn(column).execute();
    for (const column of ["message_id", "room_id", "event_id"])
      await db.schema.alterTable("webhook_deliveries").dropColumn(column).execute();
    for (const column of [
      "last_error",
      "last_failure_at",
      "last_success_at",
      "consecutive_failures",
      "failing_since",
      "disabled_at",
      "disabled_reason",
      "previous_secret_expires_at",
      "previous_secret_ciphertext",
      "rate_next_at",
      "max_per_second",
      "headers_ciphertext",
      "room_filter",
      "event_prefixes",
      "signature_scheme",
    ])
      await db.schema.alterTable("webhooks").dropColumn(column).execute();
  },
};
