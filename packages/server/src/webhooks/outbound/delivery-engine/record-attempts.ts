import { sql, type Kysely, type Transaction } from "kysely";
import { dialectOf } from "../../../db/dialect.js";
import type { Database, DeliveryStatus } from "../../../db/schema.js";
import type { AttemptOutcome } from "../transport/webhook-sender.js";
import { retryAfterMs } from "./retry-after.js";
import { nextRetryDelay, type RetryPolicy } from "./retry-schedule.js";

/** One finished attempt of a delivery this worker claimed. */
export interface FinishedAttempt {
  deliveryId: number;
  /** This attempt's number: attempts made before it + 1. */
  attempt: number;
  outcome: AttemptOutcome;
  /** The endpoint, for its health counters (absent: the counters are left alone). */
  webhookId?: number;
  /** The request's headers as sent (custom header values masked). */
  requestHeaders?: Record<string, string>;
}

/** The auto-disable rule (DESIGN section 6); either number 0 turns it off. */
export interface AutoDisableRule {
  minFailures: number;
  afterMs: number;
}

/** An endpoint this recording disabled: it answered 410, or its failures met the rule. */
export interface DisabledEndpoint {
  webhookId: number;
  name: string;
  reason: "gone" | "auto_failing";
  disabledAt: number;
}

export interface RecordOptions {
  workerId: string;
  policy: RetryPolicy;
  now: number;
  autoDisable?: AutoDisableRule | undefined;
  /**
   * Called inside the transaction with the endpoints it disabled, to queue the
   * WEBHOOK_ENDPOINT_DISABLED event in it (so the event and the disable commit together).
   */
  endpointsDisabled?: (trx: Transaction<Database>, disabled: DisabledEndpoint[]) => Promise<void>;
  /** How many of the recorded failures had their retry pushed back by a Retry-After answer. */
  retryAfterHonoured?: (count: number) => void;
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
  retryAfter: number | null = null,
): { status: DeliveryStatus; nextAttemptAt: number | null } {
  if (ok) return { status: "SUCCESS", nextAttemptAt: null };
  const delay = nextRetryDelay(attempt, policy);
  if (delay === "exhausted") return { status: "EXHAUSTED", nextAttemptAt: null };
  // A receiver's Retry-After (429/503) wins over a shorter back-off, within the ceiling.
  const wait =
    retryAfter === null ? delay : Math.max(delay, Math.min(retryAfter, policy.backoffMaxMs));
  return { status: "FAILED", nextAttemptAt: now + wait };
}

/** The Retry-After wait of an answer that may carry one (429, 503), else null. */
function askedToWait(outcome: AttemptOutcome, now: number): number | null {
  if (outcome.responseStatus !== 429 && outcome.responseStatus !== 503) return null;
  return retryAfterMs(outcome.responseHeaders?.["retry-after"], now);
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
  options: RecordOptions,
): Promise<RecordedTransition[]> {
  const { workerId, policy, now } = options;
  if (attempts.length === 0) return [];
  let honoured = 0;
  const next = attempts.map(({ attempt, outcome }) => {
    const wait = askedToWait(outcome, now);
    const transition = transitionAfter(attempt, outcome.ok, policy, now, wait);
    const plain = transitionAfter(attempt, outcome.ok, policy, now);
    if (transition.nextAttemptAt !== plain.nextAttemptAt) honoured++;
    return transition;
  });
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
          written.map(({ deliveryId, attempt, outcome, webhookId, requestHeaders }) => ({
            delivery_id: deliveryId,
            attempt,
            started_at: outcome.startedAt.getTime(),
            duration_ms: outcome.durationMs,
            response_status: outcome.responseStatus,
            response_body: outcome.responseBody,
            error: outcome.error,
            webhook_id: webhookId ?? null,
            request_headers: requestHeaders === undefined ? null : JSON.stringify(requestHeaders),
            response_headers: outcome.responseHeaders
              ? JSON.stringify(outcome.responseHeaders)
              : null,
          })),
        )
        .execute();
      const disabled = await recordEndpointHealth(trx, written, now, options.autoDisable);
      if (disabled.length > 0) await options.endpointsDisabled?.(trx, disabled);
    }
    if (honoured > 0) options.retryAfterHonoured?.(honoured);
    return attempts.map(({ deliveryId }, i): RecordedTransition =>
      updated.has(deliveryId)
        ? { deliveryId, recorded: true, ...next[i]! }
        : { deliveryId, recorded: false },
    );
  });
}

/**
 * Folds a batch of attempts into each endpoint's health counters (last success, last failure and
 * its error, the current run of failures), then disables the endpoints that answered 410 Gone or
 * whose run of failures meets the auto-disable rule: at least `minFailures` attempts in a row,
 * the first more than `afterMs` ago. Two statements whatever the batch, plus, on PostgreSQL, a
 * lock of the endpoint rows in id order first, so two processes recording for the same
 * endpoints queue up instead of deadlocking. The lock is FOR NO KEY UPDATE, as the UPDATE's own:
 * FOR UPDATE would also block the foreign-key checks (KEY SHARE) of a fan-out inserting
 * deliveries for several endpoints, and the two could deadlock (seen with two processes). Answers the endpoints it disabled (only ones that
 * were enabled: a test delivery to a disabled endpoint changes nothing).
 */
async function recordEndpointHealth(
  trx: Transaction<Database>,
  written: readonly FinishedAttempt[],
  now: number,
  rule: AutoDisableRule | undefined,
): Promise<DisabledEndpoint[]> {
  interface Fold {
    id: number;
    hadSuccess: boolean;
    failuresAfter: number;
    firstFailureAfter: number | null;
    lastSuccessAt: number | null;
    lastFailureAt: number | null;
    lastError: string | null;
    gone: boolean;
  }
  const folds = new Map<number, Fold>();
  const ordered = written
    .filter((a) => a.webhookId !== undefined)
    .sort((a, b) => a.outcome.startedAt.getTime() - b.outcome.startedAt.getTime());
  for (const { webhookId, outcome } of ordered) {
    const id = webhookId!;
    let fold = folds.get(id);
    if (!fold) {
      fold = {
        id,
        hadSuccess: false,
        failuresAfter: 0,
        firstFailureAfter: null,
        lastSuccessAt: null,
        lastFailureAt: null,
        lastError: null,
        gone: false,
      };
      folds.set(id, fold);
    }
    const at = outcome.startedAt.getTime();
    if (outcome.ok) {
      fold.hadSuccess = true;
      fold.failuresAfter = 0;
      fold.firstFailureAfter = null;
      fold.lastSuccessAt = at;
    } else {
      fold.failuresAfter++;
      fold.firstFailureAfter ??= at;
      fold.lastFailureAt = at;
      fold.lastError = (outcome.error ?? "failed").slice(0, 1000);
      if (outcome.responseStatus === 410) fold.gone = true;
    }
  }
  if (folds.size === 0) return [];
  const ids = [...folds.keys()].sort((a, b) => a - b);
  if (dialectOf(trx) === "postgres") {
    await sql`SELECT id FROM webhooks WHERE id IN (${sql.join(ids)}) ORDER BY id FOR NO KEY UPDATE`.execute(
      trx,
    );
  }
  const values = sql.join(
    [...folds.values()].map(
      (f) =>
        sql`(CAST(${f.id} AS bigint), CAST(${f.hadSuccess ? 1 : 0} AS integer), CAST(${f.failuresAfter} AS integer), CAST(${f.firstFailureAfter} AS bigint), CAST(${f.lastSuccessAt} AS bigint), CAST(${f.lastFailureAt} AS bigint), CAST(${f.lastError} AS text))`,
    ),
  );
  await sql`
    UPDATE webhooks
    SET consecutive_failures = CASE WHEN v.had_success = 1 THEN v.failures
        ELSE webhooks.consecutive_failures + v.failures END,
      failing_since = CASE WHEN v.had_success = 1 THEN v.first_failure
        ELSE coalesce(webhooks.failing_since, v.first_failure) END,
      last_success_at = coalesce(v.last_success, webhooks.last_success_at),
      last_failure_at = coalesce(v.last_failure, webhooks.last_failure_at),
      last_error = CASE WHEN v.last_failure IS NULL THEN webhooks.last_error ELSE v.last_error END
    FROM (
      SELECT column1 AS id, column2 AS had_success, column3 AS failures, column4 AS first_failure,
        column5 AS last_success, column6 AS last_failure, column7 AS last_error
      FROM (VALUES ${values}) AS batch
    ) AS v
    WHERE webhooks.id = v.id
  `.execute(trx);

  const gone = [...folds.values()].filter((f) => f.gone).map((f) => f.id);
  const ruleOn = rule !== undefined && rule.minFailures > 0 && rule.afterMs > 0;
  if (gone.length === 0 && !ruleOn) return [];
  const goneList = gone.length === 0 ? sql`NULL` : sql.join(gone);
  const failing = ruleOn
    ? sql`(id IN (${sql.join(ids)}) AND consecutive_failures >= ${rule.minFailures}
        AND failing_since < ${now - rule.afterMs})`
    : sql`1 = 0`;
  const { rows } = await sql<{ id: number | string; name: string; disabled_reason: string }>`
    UPDATE webhooks
    SET enabled = 0, disabled_at = ${now}, updated_at = ${now},
      disabled_reason = CASE WHEN id IN (${goneList}) THEN 'gone' ELSE 'auto_failing' END
    WHERE enabled = 1 AND (id IN (${goneList}) OR ${failing})
    RETURNING id, name, disabled_reason
  `.execute(trx);
  return rows
    .map((row) => ({
      webhookId: Number(row.id),
      name: row.name,
      reason: row.disabled_reason as DisabledEndpoint["reason"],
      disabledAt: now,
    }))
    .sort((a, b) => a.webhookId - b.webhookId);
}
