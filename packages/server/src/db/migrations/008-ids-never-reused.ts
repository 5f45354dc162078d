import { sql, type Kysely, type Migration } from "kysely";
import { dialectOf } from "../dialect.js";

/** Tables whose ids appear in payloads, URLs and logs: a deleted one's id must never come back. */
const TABLES = ["rooms", "messages", "webhooks", "webhook_deliveries"] as const;

/**
 * Ids of webhooks, deliveries, rooms and messages are never reused after a delete: receivers
 * deduplicate on them (docs/webhooks.md, "At-least-once: deduplicate"). PostgreSQL's sequences
 * (bigserial) never hand a number out twice. SQLite's plain INTEGER PRIMARY KEY takes max(id) + 1,
 * so deleting the newest row gave its id to the next one (a receiver could mix up two webhooks);
 * AUTOINCREMENT keeps the high-water mark in sqlite_sequence. SQLite cannot add it to an existing
 * column, so each table is rebuilt: created anew with the same definition plus AUTOINCREMENT,
 * filled, swapped in, its indexes recreated, in one transaction with foreign-key enforcement off
 * meanwhile (dropping the old table must not cascade), checked before it commits. Ids above today's
 * largest that were deleted before this migration cannot be known; from here on none is reused.
 */
export const idsNeverReused: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    if (dialectOf(db) === "postgres") return;
    // Only outside a transaction: SQLite migrations run without one (no transactional DDL).
    await sql`PRAGMA foreign_keys = OFF`.execute(db);
    try {
      await sql`BEGIN IMMEDIATE`.execute(db);
      try {
        for (const table of TABLES) await rebuildWithAutoincrement(db, table);
        const { rows } = await sql`PRAGMA foreign_key_check`.execute(db);
        if (rows.length > 0) throw new Error(`foreign keys broken by the rebuild: ${rows.length}`);
        await sql`COMMIT`.execute(db);
      } catch (error) {
        await sql`ROLLBACK`.execute(db);
        throw error;
      }
    } finally {
      await sql`PRAGMA foreign_keys = ON`.execute(db);
    }
  },
  async down() {
    // AUTOINCREMENT is harmless to keep; going back does not reuse ids either.
  },
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function rebuildWithAutoincrement(db: Kysely<any>, table: string): Promise<void> {
  const { rows } = await sql<{ type: string; sql: string }>`
    SELECT type, sql FROM sqlite_master WHERE tbl_name = ${table} AND sql IS NOT NULL
  `.execute(db);
  const definition = rows.find((row) => row.type === "table")?.sql;
  if (definition === undefined) throw new Error(`no table ${table}`);
  if (/autoincrement/i.test(definition)) return;
  const temporary = `${table}__autoincrement`;
  const rebuilt = definition
    .replace(`CREATE TABLE "${table}"`, `CREATE TABLE "${temporary}"`)
    .replace(/"id" integer primary key/i, '"id" integer primary key autoincrement');
  if (!/autoincrement/.test(rebuilt)) throw new Error(`unexpected definition of ${table}`);
  await sql.raw(rebuilt).execute(db);
  await sql.raw(`INSERT INTO "${temporary}" SELECT * FROM "${table}"`).execute(db);
  await sql.raw(`DROP TABLE "${table}"`).execute(db);
  await sql.raw(`ALTER TABLE "${temporary}" RENAME TO "${table}"`).execute(db);
  for (const index of rows.filter((row) => row.type === "index"))
    await sql.raw(index.sql).execute(db);
}
