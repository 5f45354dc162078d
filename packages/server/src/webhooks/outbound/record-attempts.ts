import { sql, type Kysely } from "kysely";
import type { Database, DeliveryStatus } from "../../db/schema.js";
import { nextRetryDelay, type RetryPolicy } from "./retry-schedule.js";
import type { AttemptOutcome } from "./webhook-sender.js";

/** One finished attempt of a delivery this worker claimed. */
export interface FinishedAttempt {
  deliveryId: number;
  /** This attempt's number: attempts made before it + 1. */
  attempt: number;
  outcome: AttemptOutcome;
}

/** What recording did to one delivery. */
export type RecordedTransition =
  | { deliveryId: number; recorded: true; status: DeliveryStatus; nextAttemptAt: number | null }
  /** The row is gone (its endpoint was deleted) or another worker holds it now: nothing written. */
  | { deliveryId: number; recorded: false };

/**
 * The state after an attempt (spec "States and transitions"): 2xx -> SUCCESS; a failure with
 * attempts left -> FAILED, next attempt after the back-off, counted from now; the last allowed
 * attempt failed -> EXHAUSTED. Finished rows have no next attempt.
 */
export function transitionAfter(
  attempt: number,
  ok: boolean,
  policy: RetryPolicy,
  now: number,
): { status: DeliveryStatus; nextAttemptAt: number | null } {
  if (ok) return { status: "SUCCESS", nextAttemptAt: null };
  const delay = nextRetryDelay(attempt, policy);
  if (delay === "exhausted") return { status: "EXHAUSTED", nextAttemptAt: null };
  return { status: "FAILED", nextAttemptAt: now + delay };
}

/**
 * Records attempts and their state transitions. Each delivery's attempt row and its new state are
 * written together, and a batch shares one transaction (one commit for many deliveries is what
 * keeps recording off the critical path under load): one guarded `UPDATE ... FROM (VALUES ...)`
 * for every delivery of the batch, then one insert of the attempt rows of those it updated; two
 * statements (two round trips on PostgreSQL) whatever the batch size.
 *
 * The update is guarded by `locked_by = workerId`: a worker whose lease ran out and was retaken
 * by another must not overwrite the new owner's state, so it writes nothing. A delivery whose row
 * is gone (its endpoint was deleted while the attempt ran) ends here too, quietly: no error, no
 * retry. The update comes first in the transaction so that SQLite takes its write lock before
 * reading anything (a read-then-write transaction could fail with SQLITE_BUSY_SNAPSHOT instead of
 * waiting on busy_timeout).
 */
export async function recordAttempts(
  db: Kysely<Database>,
  attempts: readonly FinishedAttempt[],
  options: { workerId: string; policy: RetryPolicy; now: number },
): Promise<RecordedTransition[]> {
  const { workerId, policy, now } = options;
  if (attempts.length === 0) return [];
  const next = attempts.map(({ attempt, outcome }) =>
    transitionAfter(attempt, outcome.ok, policy, now),
  );
  return db.transaction().execute(async (trx) => {
    // One guarded update for the whole batch. Both databases name the columns of a VALUES list
    // column1, column2, ...; the casts give PostgreSQL the parameter types.
    const values = sql.join(
      attempts.map(
        ({ deliveryId, attempt, outcome }, i) =>
          sql`(CAST(${deliveryId} AS bigint), CAST(${next[i]!.status} AS varchar(16)), CAST(${attempt} AS integer), CAST(${next[i]!.nextAttemptAt} AS bigint), CAST(${outcome.responseStatus} AS integer))`,
      ),
    );
    const { rows } = await sql<{ id: number }>`
      UPDATE webhook_deliveries
      SET status = v.status, attempts = v.attempt, next_attempt_at = v.next_attempt_at,
        last_response_status = v.response_status, updated_at = ${now},
        locked_until = NULL, locked_by = NULL
      FROM (
        SELECT column1 AS id, column2 AS status, column3 AS attempt, column4 AS next_attempt_at,
          column5 AS response_status
        FROM (VALUES ${values}) AS batch
      ) AS v
      WHERE webhook_deliveries.id = v.id AND webhook_deliveries.locked_by = ${workerId}
      RETURNING webhook_deliveries.id
    `.execute(trx);
    const updated = new Set(rows.map((row) => Number(row.id)));
    const written = attempts.filter(({ deliveryId }) => updated.has(deliveryId));
    if (written.length > 0) {
      await trx
        .insertInto("webhook_attempts")
        .values(
          written.map(({ deliveryId, attempt, outcome }) => ({
            delivery_id: deliveryId,
            attempt,
            started_at: outcome.startedAt.getTime(),
            duration_ms: outcome.durationMs,
            response_status: outcome.responseStatus,
            response_body: outcome.responseBody,
            error: outcome.error,
          })),
        )
        .execute();
    }
    return attempts.map(({ deliveryId }, i): RecordedTransition =>
      updated.has(deliveryId)
        ? { deliveryId, recorded: true, ...next[i]! }
        : { deliveryId, recorded: false },
    );
  });
}
