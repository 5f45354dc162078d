import { sql, type Kysely, type Migration } from "kysely";

/**
 * The deliveries under a lease, by the lease's end: how the dispatcher finds when the earliest
 * lease runs out (next-due-time.ts), to claim a crashed process's deliveries again at that moment
 * rather than at the next sweep. Partial: only a claim sets `locked_until` and the recording of
 * the attempt clears it, so the index holds the deliveries being sent (plus those a crashed
 * process left, until they are claimed again), not the table.
 */
export const deliveryLeaseIndex: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema
      .createIndex("webhook_deliveries_leased")
      .on("webhook_deliveries")
      .column("locked_until")
      .where(sql.ref("locked_until"), "is not", null)
      .execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    await db.schema.dropIndex("webhook_deliveries_leased").execute();
  },
};
