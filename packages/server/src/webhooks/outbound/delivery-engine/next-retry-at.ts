import type { Kysely } from "kysely";
import type { Database } from "../../../db/schema.js";

/**
 * The earliest `next_attempt_at` still in the future, or null: when the dispatcher's retry timer
 * should fire next. Read after a sweep, a timer or a reconnect, when the dispatcher cannot know it
 * from the transitions it recorded itself (another process's retries, rows from before a restart).
 * Any row counts, whatever its status: a finished row has no next attempt (null), and an early
 * wake-up only costs an empty claim.
 */
export async function nextRetryAt(db: Kysely<Database>, now: number): Promise<number | null> {
  const next = await db
    .selectFrom("webhook_deliveries")
    .select((eb) => eb.fn.min("next_attempt_at").as("at"))
    .where("next_attempt_at", ">", now)
    .executeTakeFirst();
  return next?.at == null ? null : Number(next.at);
}
