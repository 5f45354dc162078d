import type { Kysely } from "kysely";
import { dialectOf } from "./dialect.js";
import type { Database } from "./schema.js";

/**
 * Runs several reads against one snapshot of the database, so what they answer together is
 * consistent (an endpoint's health columns and its attempt counts, written by one recording
 * transaction, are seen both before or both after it). PostgreSQL needs REPEATABLE READ for that;
 * SQLite's transaction reads one snapshot already.
 */
export function readSnapshot<T>(
  db: Kysely<Database>,
  read: (db: Kysely<Database>) => Promise<T>,
): Promise<T> {
  const tx = db.transaction();
  return (dialectOf(db) === "postgres" ? tx.setIsolationLevel("repeatable read") : tx).execute(
    read,
  );
}
