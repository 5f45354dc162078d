import type { Insertable, Kysely } from "kysely";
import type { Database, FilesTable } from "../db/schema.js";

/**
 * Queries on `files`: one row per stored upload; the bytes live on disk under `storage_key`.
 * Every function takes the database or a transaction.
 */
export async function insertFileRow(
  db: Kysely<Database>,
  values: Insertable<FilesTable>,
): Promise<number> {
  const row = await db.insertInto("files").values(values).returning("id").executeTakeFirstOrThrow();
  return row.id;
}
