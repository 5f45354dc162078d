import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";

/**
 * `server_keys` holds the generated keys that processes sharing one PostgreSQL database must agree
 * on (wrapped by the master key; see server-keys.ts).
 */
export async function listServerKeys(
  db: Kysely<Database>,
): Promise<{ name: string; value: string }[]> {
  return db.selectFrom("server_keys").select(["name", "value"]).execute();
}

/**
 * Stores `value` under `name` unless a key of that name exists: when processes start together,
 * the first insert wins and every process reads the winner's key.
 */
export async function insertServerKey(
  db: Kysely<Database>,
  name: string,
  value: string,
  now: number,
): Promise<void> {
  await db
    .insertInto("server_keys")
    .values({ name, value, created_at: now })
    .onConflict((oc) => oc.column("name").doNothing())
    .execute();
}

/** Replaces the stored value only if it is still `previous` (another process may have won). */
export async function replaceServerKey(
  db: Kysely<Database>,
  name: string,
  previous: string,
  value: string,
): Promise<void> {
  await db
    .updateTable("server_keys")
    .set({ value })
    .where("name", "=", name)
    .where("value", "=", previous)
    .execute();
}

export async function deleteServerKey(db: Kysely<Database>, name: string): Promise<void> {
  await db.deleteFrom("server_keys").where("name", "=", name).execute();
}
