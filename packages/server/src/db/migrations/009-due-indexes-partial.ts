import { sql, type Kysely, type Migration } from "kysely";

/**
 * The two indexes of due deliveries hold only rows that have a next attempt. A finished delivery
 * (SUCCESS, EXHAUSTED) has none, and those are nearly all of a long-running install's rows: kept
 * in the index they made it as large as the table, and once SQLite had statistics (ANALYZE, or
 * PRAGMA optimize) the planner saw a million rows sharing one next_attempt_at (NULL) and the
 * claim ran 12x slower at 300,000 finished rows (0.53 ms against 0.04). Both databases use a
 * partial index `WHERE next_attempt_at IS NOT NULL` for `next_attempt_at <= ?`, as the claim and
 * the retry timer ask.
 */
export const dueIndexesPartial: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema.dropIndex("webhook_deliveries_endpoint_due").execute();
    await db.schema
      .createIndex("webhook_deliveries_endpoint_due")
      .on("webhook_deliveries")
      .columns(["webhook_id", "next_attempt_at"])
      .where(sql.ref("next_attempt_at"), "is not", null)
      .execute();
    await db.schema.dropIndex("webhook_deliveries_due").execute();
    await db.schema
      .createIndex("webhook_deliveries_due")
      .on("webhook_deliveries")
      .column("next_attempt_at")
      .where(sql.ref("next_attempt_at"), "is not", null)
      .execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    await db.schema.dropIndex("webhook_deliveries_due").execute();
    await db.schema
      .createIndex("webhook_deliveries_due")
      .on("webhook_deliveries")
      .column("next_attempt_at")
      .execute();
    await db.schema.dropIndex("webhook_deliveries_endpoint_due").execute();
    await db.schema
      .createIndex("webhook_deliveries_endpoint_due")
      .on("webhook_deliveries")
      .columns(["webhook_id", "next_attempt_at"])
      .execute();
  },
};
