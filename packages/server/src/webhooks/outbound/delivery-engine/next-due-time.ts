import type { Kysely } from "kysely";
import type { Database } from "../../../db/schema.js";

/**
 * The next due time: when the dispatcher's retry timer should fire next, or null: the earliest moment a row that is
 * not due now may become due. That is the earlier of
 *
 * - the earliest `next_attempt_at` still in the future (a retry, this process's or another's);
 * - the end of the earliest lease still running, plus 1 ms: the claim takes a row once
 *   `locked_until < now`, so a lease held by a process that died (SIGKILL, power loss) is taken
 *   again when it runs out, not at the next sweep. Every lease counts, whoever holds it; a lease
 *   that ends because its holder recorded the attempt only costs an empty claim.
 *
 * Read after a sweep, a timer or a reconnect, and by the lease watch (lease-watch.ts), when the
 * dispatcher cannot know it from the transitions it recorded itself (another process's retries
 * and leases, rows from before a restart).
 *
 * Any row counts, whatever its status: a finished row has no next attempt (null), and only a
 * claim sets `locked_until` (the recording of the attempt clears it). Each half is one seek: the
 * first through the partial index of rows with a next attempt (`webhook_deliveries_due`), the
 * second through the partial index of leased rows (`webhook_deliveries_leased`, which holds only
 * the deliveries being sent), so neither reads the finished rows, however many there are.
 */
export async function nextDueTime(db: Kysely<Database>, now: number): Promise<number | null> {
  const next = await db
    .selectNoFrom((eb) => [
      eb
        .selectFrom("webhook_deliveries")
        .select((inner) => inner.fn.min("next_attempt_at").as("at"))
        .where("next_attempt_at", ">", now)
        .as("retry"),
      eb
        .selectFrom("webhook_deliveries")
        .select((inner) => inner.fn.min("locked_until").as("at"))
        .where("locked_until", ">=", now)
        .as("lease"),
    ])
    .executeTakeFirst();
  // pg answers BIGINT as text.
  const retry = next?.retry == null ? null : Number(next.retry);
  const lease = next?.lease == null ? null : Number(next.lease) + 1;
  if (retry === null) return lease;
  return lease === null ? retry : Math.min(retry, lease);
}
