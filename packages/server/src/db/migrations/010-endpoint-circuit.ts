import { sql, type Kysely, type Migration } from "kysely";

/**
 * The circuit breaker of each endpoint, as its health shows it: `circuit` ("closed", "open",
 * "half-open"), written by the dispatcher when it changes, and when it changed. The breaker itself
 * runs in each process (webhooks/outbound/delivery-engine/endpoint-circuits.ts); these columns
 * are what an operator reads through any process.
 */
export const endpointCircuit: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable("webhooks")
      .addColumn("circuit", sql.raw("varchar(16)"), (c) => c.notNull().defaultTo("closed"))
      .execute();
    await db.schema.alterTable("webhooks").addColumn("circuit_changed_at", "bigint").execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    await db.schema.alterTable("webhooks").dropColumn("circuit_changed_at").execute();
    await db.schema.alterTable("webhooks").dropColumn("circuit").execute();
  },
};
