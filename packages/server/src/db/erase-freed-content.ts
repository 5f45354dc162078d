import { sql, type Kysely } from "kysely";
import { dialectOf } from "./dialect.js";
import type { Database } from "./schema.js";

/**
 * After a delete that must leave nothing readable (a message's content and revisions): on SQLite,
 * whose connection zeroes freed space in the database file (`PRAGMA secure_delete = ON`,
 * open-database.ts), the write-ahead log still holds the pages as they were when the content was
 * written; a TRUNCATE checkpoint copies the latest pages into the file and empties the log. A
 * checkpoint that readers kept from finishing (another process with the file open) is retried a
 * few times; what is left then goes at the next checkpoint. PostgreSQL keeps dead row versions
 * until VACUUM reuses their space (docs/chat-api.md, "Delete"): nothing to do here.
 */
export async function eraseFreedContent(db: Kysely<Database>): Promise<void> {
  if (dialectOf(db) !== "sqlite") return;
  for (let attempt = 0; attempt < 5; attempt++) {
    const { rows } = await sql<{ busy: number }>`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db);
    if (Number(rows[0]?.busy ?? 0) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
