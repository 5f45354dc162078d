import type { Kysely } from "kysely";
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
 * keeps recording off the critical path under load).
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
  return db.transaction().execute(async (trx) => {
    const transitions: RecordedTransition[] = [];
    for (const { deliveryId, attempt, outcome } of attempts) {
      const next = transitionAfter(attempt, outcome.ok, policy, now);
      const updated = await trx
        .updateTable("webhook_deliveries")
        .set({
          status: next.status,
          attempts: attempt,
          next_attempt_at: next.nextAttemptAt,
          last_response_status: outcome.responseStatus,
          updated_at: now,
          locked_until: null,
          locked_by: null,
        })
        .where("id", "=", deliveryId)
        .where("locked_by", "=", workerId)
        .returning("id")
        .executeTakeFirst();
      if (!updated) {
        transitions.push({ deliveryId, recorded: false });
        continue;
      }
      await trx
        .insertInto("webhook_attempts")
        .values({
          delivery_id: deliveryId,
          attempt,
          started_at: outcome.startedAt.getTime(),
          duration_ms: outcome.durationMs,
          response_status: outcome.responseStatus,
          response_body: outcome.responseBody,
          error: outcome.error,
        })
        .execute();
      transitions.push({ deliveryId, recorded: true, ...next });
    }
    return transitions;
  });
}
