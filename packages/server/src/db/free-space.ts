import fs from "node:fs";
import path from "node:path";
import { sql, type Kysely } from "kysely";
import { dialectOf } from "./dialect.js";
import type { Database } from "./schema.js";

/**
 * Below this many free bytes on the disk holding the SQLite database, it counts as full: /readyz
 * answers 503, and an I/O error on a write is taken for a full disk. Writes need some room for
 * the write-ahead log; with less than this, the next one may fail.
 */
export const LOW_FREE_SPACE_BYTES = 1024 * 1024;

/**
 * Bytes this process may still write on the file system holding `file` (root may also use the
 * blocks reserved for it), or undefined when that cannot be known (an in-memory database).
 */
export function freeSpaceFor(file: string): number | undefined {
  if (file === "" || file === ":memory:") return undefined;
  try {
    const stats = fs.statfsSync(path.dirname(file));
    const blocks = process.getuid?.() === 0 ? stats.bfree : stats.bavail;
    return blocks * stats.bsize;
  } catch {
    return undefined;
  }
}

/**
 * Free bytes on the disk holding the database `db` (as `freeSpaceFor`) where it is a file of this
 * machine (SQLite); undefined for an in-memory database, and for PostgreSQL, whose disk is the
 * server's (it reports a full disk through its errors: database-errors.ts).
 */
export async function databaseFreeSpace(db: Kysely<Database>): Promise<number | undefined> {
  if (dialectOf(db) !== "sqlite") return undefined;
  const { rows } = await sql<{ file: string }>`
    select file from pragma_database_list where name = 'main'
  `.execute(db);
  return freeSpaceFor(rows[0]?.file ?? "");
}
