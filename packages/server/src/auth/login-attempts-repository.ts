import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";

/** Records one attempt under each key (one statement). */
export async function insertLoginAttempts(
  db: Kysely<Database>,
  keys: readonly string[],
  attemptId: string,
  now: number,
): Promise<void> {
  await db
    .insertInto("login_attempts")
    .values(keys.map((key) => ({ attempt_key: key, attempt_id: attemptId, attempted_at: now })))
    .execute();
}

/** How many attempts a key made since `since`, and the time of the oldest of them. */
export async function countLoginAttempts(
  db: Kysely<Database>,
  key: string,
  since: number,
): Promise<{ count: number; oldest: number | null }> {
  const row = await db
    .selectFrom("login_attempts")
    .select((eb) => [
      eb.fn.countAll<number | string>().as("count"),
      eb.fn.min("attempted_at").as("oldest"),
    ])
    .where("attempt_key", "=", key)
    .where("attempted_at", ">", since)
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), oldest: row.oldest === null ? null : Number(row.oldest) };
}

/** Takes one attempt back (it succeeded, or it was refused before being tried). */
export async function deleteLoginAttempt(db: Kysely<Database>, attemptId: string): Promise<void> {
  await db.deleteFrom("login_attempts").where("attempt_id", "=", attemptId).execute();
}

/** Drops attempts older than any window counts. */
export async function deleteLoginAttemptsBefore(
  db: Kysely<Database>,
  before: number,
): Promise<void> {
  await db.deleteFrom("login_attempts").where("attempted_at", "<", before).execute();
}
