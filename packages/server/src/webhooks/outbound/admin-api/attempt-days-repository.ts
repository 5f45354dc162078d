import { sql, type Kysely } from "kysely";
import type { Database } from "../../../db/schema.js";

/**
 * An endpoint's attempts since `since`, counted per 24 hours from `since` (day 0 first): how many,
 * and how many were answered 2xx. One pass over the index (webhook_id, started_at); the day is
 * integer arithmetic on epoch milliseconds, the same on both databases.
 */
export async function countAttemptsPerDay(
  db: Kysely<Database>,
  webhookId: number,
  since: number,
  until: number,
): Promise<{ day: number; attempts: number; successes: number }[]> {
  // The cast: better-sqlite3 binds a JS number as REAL, which would make the division a fraction.
  const day = sql<number>`cast((${sql.ref("started_at")} - ${since}) / 86400000 as integer)`;
  const rows = await db
    .selectFrom("webhook_attempts")
    .select((eb) => [
      day.as("day"),
      eb.fn.countAll<number | string>().as("attempts"),
      eb.fn
        .sum<number | string>(
          eb
            .case()
            .when(eb.and([eb("response_status", ">=", 200), eb("response_status", "<", 300)]))
            .then(1)
            .else(0)
            .end(),
        )
        .as("successes"),
    ])
    .where("webhook_id", "=", webhookId)
    .where("started_at", ">=", since)
    .where("started_at", "<", until)
    // By position: the day's expression holds a parameter, which PostgreSQL would see as a
    // different expression when written again.
    .groupBy(sql`1`)
    .execute();
  return rows.map((row) => ({
    day: Number(row.day),
    attempts: Number(row.attempts),
    successes: Number(row.successes),
  }));
}
