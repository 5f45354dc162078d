import { sql, type Kysely, type Migration } from "kysely";

/**
 * Indexes the delivery claim seeks through (see claim-deliveries.ts): each enabled endpoint's due
 * rows in time order, so an endpoint at its concurrency cap, or a disabled one, costs the claim
 * nothing however long its backlog; and the few test deliveries, which are sent even to a
 * disabled endpoint.
 */
export const deliveryClaimIndexes: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema
      .createIndex("webhook_deliveries_endpoint_due")
      .on("webhook_deliveries")
      .columns(["webhook_id", "next_attempt_at"])
      .execute();
    await db.schema
      .createIndex("webhook_deliveries_test_due")
      .on("webhook_deliveries")
      .column("next_attempt_at")
      .where(sql.ref("event"), "=", "WEBHOOK_TEST")
      .execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    await db.schema.dropIndex("webhook_deliveries_test_due").execute();
    await db.schema.dropIndex("webhook_deliveries_endpoint_due").execute();
  },
};
