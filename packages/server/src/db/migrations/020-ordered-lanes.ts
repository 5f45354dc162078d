import { sql, type Kysely, type Migration } from "kysely";

/**
 * Ordered delivery lanes (docs/webhooks.md, "Ordered delivery"): the endpoint's `ordering`
 * ("none", "room", "endpoint"), and on each delivery its `lane`: null for an endpoint without
 * ordering, else the room id ("room"; 0 for an event without a room) or 0 ("endpoint").
 *
 * Every unfinished delivery is in exactly one of two claim indexes: a delivery without a lane in
 * `webhook_deliveries_endpoint_due` (webhook_id, next_attempt_at), as before, and one with a lane
 * in `webhook_deliveries_lane` (webhook_id, lane, id), where the claim finds each lane's head (its
 * lowest unfinished id) by one seek per lane. So an endpoint without ordering writes and claims
 * through the same one index as before this migration, and a lane held by a failing head costs
 * the claim one seek, never a walk over the deliveries queued behind it.
 */
export const orderedLanes: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable("webhooks")
      .addColumn("ordering", sql.raw("varchar(16)"), (c) => c.notNull().defaultTo("none"))
      .execute();
    await db.schema.alterTable("webhook_deliveries").addColumn("lane", "bigint").execute();
    await db.schema.dropIndex("webhook_deliveries_endpoint_due").execute();
    await db.schema
      .createIndex("webhook_deliveries_endpoint_due")
      .on("webhook_deliveries")
      .columns(["webhook_id", "next_attempt_at"])
      .where(sql<boolean>`next_attempt_at is not null and lane is null`)
      .execute();
    await db.schema
      .createIndex("webhook_deliveries_lane")
      .on("webhook_deliveries")
      .columns(["webhook_id", "lane", "id"])
      .where(sql<boolean>`next_attempt_at is not null and lane is not null`)
      .execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    await db.schema.dropIndex("webhook_deliveries_lane").execute();
    await db.schema.dropIndex("webhook_deliveries_endpoint_due").execute();
    await db.schema
      .createIndex("webhook_deliveries_endpoint_due")
      .on("webhook_deliveries")
      .columns(["webhook_id", "next_attempt_at"])
      .where(sql.ref("next_attempt_at"), "is not", null)
      .execute();
    await db.schema.alterTable("webhook_deliveries").dropColumn("lane").execute();
    await db.schema.alterTable("webhooks").dropColumn("ordering").execute();
  },
};
