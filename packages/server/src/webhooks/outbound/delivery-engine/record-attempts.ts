import { sql, type Kysely, type Transaction } from "kysely";
import { executeNamed } from "../../../db/compiled-query.js";
import { byDialect, lockRowsInIdOrder, type PerDialect } from "../../../db/dialect.js";
import type { Database, DeliveryStatus } from "../../../db/schema.js";
import { maskLoggedRequestHeaders, maskLoggedResponseHeaders } from "../mask-logged-headers.js";
import type { AttemptOutcome } from "../transport/webhook-sender.js";
import { backoffDelay, type RetryPolicy } from "./backoff-schedule.js";
import { parseRetryAfter } from "./parse-retry-after.js";

/** One finished attempt of a delivery this worker claimed. */
export interface FinishedAttempt {
  deliveryId: number;
  /** This attempt's number: attempts made before it + 1. */
  attempt: number;
  outcome: AttemptOutcome;
  /** The endpoint, for its health counters (absent: the counters are left alone). */
  webhookId?: number;
  /** The request's headers as sent (custom header values masked; signatures are masked here). */
  requestHeaders?: Record<string, string>;
  /** An ownership challenge the receiver answered with 2xx and echoed: this challenge. */
  verifiedChallenge?: string;
}

/** The auto-disable rule (docs/webhooks.md, "Auto-disable, 410 Gone, and re-enabling"); either number 0 turns it off. */
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
 * The state after an attempt (docs/webhooks.md, "The delivery log"): 2xx -> SUCCESS; a failure with
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
  const delay = backoffDelay(attempt, policy);
  if (delay === "exhausted") return { status: "EXHAUSTED", nextAttemptAt: null };
  // A receiver's Retry-After (429/503) wins over a shorter back-off, within the ceiling.
  const wait =
    retryAfter === null ? delay : Math.max(delay, Math.min(retryAfter, policy.backoffMaxMs));
  return { status: "FAILED", nextAttemptAt: now + wait };
}

/** The Retry-After wait of an answer that may carry one (429, 503), else null. */
function askedToWait(outcome: AttemptOutcome, now: number): number | null {
  if (outcome.responseStatus !== 429 && outcome.responseStatus !== 503) return null;
  return parseRetryAfter(outcome.responseHeaders?.["retry-after"], now);
}

/**
 * Records attempts and their state transitions. Each delivery's attempt row and its new state are
 * written together, and a batch shares one transaction (one commit for many deliveries is what
 * keeps recording off the critical path under load): one guarded `UPDATE ... FROM (VALUES ...)`
 * for every delivery of the batch, then one insert of the attempt rows of those it updated, then
 * the endpoints' health; on PostgreSQL all of it is one statement (recordOnPostgres). A batch of
 * successes costs one round trip: that statement is its own transaction, since no endpoint can be
 * due for disabling (only a lost lease needs a second transaction, to fold the health counters from
 * what was written). A batch with a failure costs three (BEGIN, the statement, COMMIT), so that a
 * disable and its event commit with the attempts that called for it.
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
  const { policy, now } = options;
  if (attempts.length === 0) return [];
  let honoured = 0;
  const next = attempts.map(({ attempt, outcome }) => {
    const wait = askedToWait(outcome, now);
    const transition = transitionAfter(attempt, outcome.ok, policy, now, wait);
    const plain = transitionAfter(attempt, outcome.ok, policy, now);
    if (transition.nextAttemptAt !== plain.nextAttemptAt) honoured++;
    return transition;
  });
  const updated = await byDialect(db, RECORD)(db, attempts, next, options);
  if (honoured > 0) options.retryAfterHonoured?.(honoured);
  return transitionsOf(attempts, next, updated);
}

/** Records a batch; answers the ids of the deliveries it updated (the others' leases were lost). */
type RecordBatch = (
  db: Kysely<Database>,
  attempts: readonly FinishedAttempt[],
  next: readonly Transition[],
  options: RecordOptions,
) => Promise<Set<number>>;

/**
 * The recording is two texts on purpose. On PostgreSQL it is one statement of data-modifying CTEs
 * (recordOnPostgres): a round trip each is what recording cost there (seven before it), and its
 * text is fixed whatever the batch, so one plan. SQLite has no round trips to save (it runs in the
 * process) and no data-modifying CTEs: there it is three statements in one transaction.
 */
const RECORD: PerDialect<RecordBatch> = {
  postgres: recordOnPostgresBatch,
  sqlite: recordOnSqliteBatch,
};

async function recordOnPostgresBatch(
  db: Kysely<Database>,
  attempts: readonly FinishedAttempt[],
  next: readonly Transition[],
  options: RecordOptions,
): Promise<Set<number>> {
  const { workerId, now } = options;
  if (attempts.every(({ outcome }) => outcome.ok)) {
    // Only successes: no endpoint can be due for disabling, so the one statement is the whole
    // recording and runs as its own transaction (one round trip, no BEGIN and COMMIT).
    const result = await recordOnPostgres(db, attempts, next, healthFolds(attempts), workerId, now);
    const written = attempts.filter(({ deliveryId }) => result.updated.has(deliveryId));
    if (written.length > 0 && written.length < attempts.length) {
      // A lease was lost mid-batch: the statement left the health counters alone (it folded them
      // from every attempt); fold them from what was written.
      await db.transaction().execute((trx) => recordEndpointHealth(trx, healthFolds(written)));
    }
    return result.updated;
  }
  return db.transaction().execute(async (trx) => {
    // One statement: the guarded update, the attempt rows, the endpoints' lock and health.
    const folds = healthFolds(attempts);
    const result = await recordOnPostgres(trx, attempts, next, folds, workerId, now);
    const written = attempts.filter(({ deliveryId }) => result.updated.has(deliveryId));
    // The health fold assumed every attempt written; if a lease was lost it was skipped, and is
    // folded again from what was written.
    const applied =
      written.length === attempts.length ? { folds, health: result.health } : undefined;
    await afterWriting(trx, written, applied, options);
    return result.updated;
  });
}

async function recordOnSqliteBatch(
  db: Kysely<Database>,
  attempts: readonly FinishedAttempt[],
  next: readonly Transition[],
  options: RecordOptions,
): Promise<Set<number>> {
  return db.transaction().execute(async (trx) => {
    const updated = await updateDeliveries(trx, attempts, next, options.workerId, options.now);
    const written = attempts.filter(({ deliveryId }) => updated.has(deliveryId));
    if (written.length > 0) await insertAttempts(trx, written);
    await afterWriting(trx, written, undefined, options);
    return updated;
  });
}

/**
 * The rest of a recording transaction, once the attempts are written: the endpoints' health
 * counters from the attempts written (unless the statement `applied` them already), then the
 * auto-disable and its event.
 */
async function afterWriting(
  trx: Transaction<Database>,
  written: readonly FinishedAttempt[],
  applied: { folds: Fold[]; health: HealthRow[] } | undefined,
  options: RecordOptions,
): Promise<void> {
  if (written.length === 0) return;
  const folds = applied?.folds ?? healthFolds(written);
  const health = applied?.health ?? (await recordEndpointHealth(trx, folds));
  const disabled = await disableEndpoints(trx, folds, health, options.now, options.autoDisable);
  if (disabled.length > 0) await options.endpointsDisabled?.(trx, disabled);
}

function transitionsOf(
  attempts: readonly FinishedAttempt[],
  next: readonly Transition[],
  updated: ReadonlySet<number>,
): RecordedTransition[] {
  return attempts.map(({ deliveryId }, i): RecordedTransition =>
    updated.has(deliveryId)
      ? { deliveryId, recorded: true, ...next[i]! }
      : { deliveryId, recorded: false },
  );
}

type Transition = { status: DeliveryStatus; nextAttemptAt: number | null };

/** One guarded update for the whole batch (SQLite); answers the ids it updated. */
async function updateDeliveries(
  trx: Transaction<Database>,
  attempts: readonly FinishedAttempt[],
  next: readonly Transition[],
  workerId: string,
  now: number,
): Promise<Set<number>> {
  // Both databases name the columns of a VALUES list column1, column2, ...
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
  return new Set(rows.map((row) => Number(row.id)));
}

/** The columns of an attempt row, in the order of ATTEMPT_COLUMNS. */
function attemptRow({ deliveryId, attempt, outcome, webhookId, requestHeaders }: FinishedAttempt) {
  return [
    deliveryId,
    attempt,
    outcome.startedAt.getTime(),
    outcome.durationMs,
    outcome.responseStatus,
    outcome.responseBody,
    outcome.error,
    webhookId ?? null,
    // Never a signature nor a receiver's credential: mask-logged-headers.ts says why.
    requestHeaders === undefined ? null : JSON.stringify(maskLoggedRequestHeaders(requestHeaders)),
    outcome.responseHeaders
      ? JSON.stringify(maskLoggedResponseHeaders(outcome.responseHeaders))
      : null,
  ] as const;
}

const ATTEMPT_COLUMNS =
  "delivery_id, attempt, started_at, duration_ms, response_status, response_body, error, " +
  "webhook_id, request_headers, response_headers";

/** The attempt rows of the deliveries updated (SQLite): one multi-row insert. */
async function insertAttempts(
  trx: Transaction<Database>,
  written: readonly FinishedAttempt[],
): Promise<void> {
  const rows = sql.join(written.map((attempt) => sql`(${sql.join(attemptRow(attempt))})`));
  await sql`INSERT INTO webhook_attempts (${sql.raw(ATTEMPT_COLUMNS)}) VALUES ${rows}`.execute(trx);
}

/**
 * The whole recording of a batch on PostgreSQL in one statement (one round trip; plus BEGIN and
 * COMMIT when the batch holds a failure, see recordAttempts), of fixed text whatever the batch size
 * (the batch goes in as arrays): the guarded update of the deliveries, the insert of the attempt
 * rows of those it updated, the lock of the batch's endpoints in id order and their health update.
 * All parts of one statement share one snapshot; none reads what another wrote except through
 * RETURNING (`updated`), and the health update is applied only when every delivery of the batch
 * was updated (it was folded from all of them); otherwise the caller folds and applies it again
 * from those written. The lock (FOR NO KEY UPDATE,
 * in id order; see recordEndpointHealth) is taken by the `locked` CTE, and the health update
 * touches only rows that CTE has produced, so the locks are taken in id order whatever plan runs
 * the update; it then updates the newest version of each row (READ COMMITTED re-reads a row
 * changed since the snapshot before updating it).
 */
async function recordOnPostgres(
  db: Kysely<Database>,
  attempts: readonly FinishedAttempt[],
  next: readonly Transition[],
  folds: readonly Fold[],
  workerId: string,
  now: number,
): Promise<{ updated: Set<number>; health: HealthRow[] }> {
  const attemptRows = attempts.map(attemptRow);
  const columns = (n: number) => attemptRows.map((row) => row[n]);
  const values = [
    columns(0),
    next.map((t) => t.status),
    columns(1),
    next.map((t) => t.nextAttemptAt),
    columns(4),
    now,
    workerId,
    columns(2),
    columns(3),
    columns(5),
    columns(6),
    columns(7),
    columns(8),
    columns(9),
    folds.map((f) => f.id),
    folds.map((f) => (f.hadSuccess ? 1 : 0)),
    folds.map((f) => f.failuresAfter),
    folds.map((f) => f.firstFailureAfter),
    folds.map((f) => f.lastSuccessAt),
    folds.map((f) => f.lastFailureAt),
    folds.map((f) => f.lastError),
    attempts.length,
  ];
  // A named prepared statement (parsed once per connection, its plan kept) where `db` is the pool;
  // in a transaction the same text runs unnamed.
  const rows = await executeNamed<{
    kind: "d" | "h";
    id: number | string;
    enabled: number | null;
    failures: number | null;
    since: number | string | null;
  }>(db, { name: "parley_record_attempts", text: PG_RECORD, values });
  const updated = new Set<number>();
  const health: HealthRow[] = [];
  for (const row of rows) {
    if (row.kind === "d") updated.add(Number(row.id));
    else
      health.push({
        id: Number(row.id),
        enabled: row.enabled === 1,
        consecutiveFailures: row.failures ?? 0,
        failingSince: row.since === null ? null : Number(row.since),
      });
  }
  return { updated, health };
}

/** The new health counters from the old ones (`w.*`) and a fold (`v.*`). */
const HEALTH_SET = `
  consecutive_failures = CASE WHEN v.had_success = 1 THEN v.failures
      ELSE w.consecutive_failures + v.failures END,
    failing_since = CASE WHEN v.had_success = 1 THEN v.first_failure
      ELSE coalesce(w.failing_since, v.first_failure) END,
    last_success_at = coalesce(v.last_success, w.last_success_at),
    last_failure_at = coalesce(v.last_failure, w.last_failure_at),
    last_error = CASE WHEN v.last_failure IS NULL THEN w.last_error ELSE v.last_error END`;

const PG_RECORD = `
  WITH batch AS (
    SELECT * FROM unnest($1::bigint[], $2::varchar[], $3::int[], $4::bigint[], $5::int[])
      AS b(id, status, attempt, next_attempt_at, response_status)
  ),
  updated AS (
    UPDATE webhook_deliveries d
    SET status = b.status, attempts = b.attempt, next_attempt_at = b.next_attempt_at,
      last_response_status = b.response_status, updated_at = $6::bigint,
      locked_until = NULL, locked_by = NULL
    FROM batch b
    WHERE d.id = b.id AND d.locked_by = $7::text
    RETURNING d.id
  ),
  inserted AS (
    INSERT INTO webhook_attempts (${ATTEMPT_COLUMNS})
    SELECT a.* FROM unnest($1::bigint[], $3::int[], $8::bigint[], $9::int[], $5::int[],
      $10::text[], $11::text[], $12::bigint[], $13::text[], $14::text[])
      AS a(${ATTEMPT_COLUMNS})
    WHERE a.delivery_id IN (SELECT id FROM updated)
    RETURNING 1
  ),
  folds AS (
    SELECT * FROM unnest($15::bigint[], $16::int[], $17::int[], $18::bigint[], $19::bigint[],
      $20::bigint[], $21::text[])
      AS f(id, had_success, failures, first_failure, last_success, last_failure, last_error)
  ),
  locked AS (
    SELECT w.id FROM webhooks w
    WHERE w.id IN (SELECT id FROM folds) AND (SELECT count(*) FROM updated) = $22::int
    ORDER BY w.id
    FOR NO KEY UPDATE
  ),
  health AS (
    UPDATE webhooks w
    SET ${HEALTH_SET}
    FROM locked l JOIN folds v ON v.id = l.id
    WHERE w.id = l.id
    RETURNING w.id, w.enabled, w.consecutive_failures, w.failing_since
  )
  SELECT 'd' AS kind, id, NULL::int AS enabled, NULL::int AS failures, NULL::bigint AS since
  FROM updated
  UNION ALL
  SELECT 'h', id, enabled, consecutive_failures, failing_since FROM health
`;

/** An endpoint's health counters after a recording. */
interface HealthRow {
  id: number;
  enabled: boolean;
  consecutiveFailures: number;
  failingSince: number | null;
}

/** What a batch's attempts, in time order, do to one endpoint's health counters. */
interface Fold {
  id: number;
  hadSuccess: boolean;
  failuresAfter: number;
  firstFailureAfter: number | null;
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
  lastError: string | null;
  gone: boolean;
  /** The batch's last failed attempt (a 410's, when one answered 410): what a disable blames. */
  blamed: { deliveryId: number; attempt: number } | null;
}

/**
 * Folds a batch of attempts into per-endpoint changes of the health counters (last success, last
 * failure and its error, the current run of failures), the attempts taken in time order.
 */
function healthFolds(attempts: readonly FinishedAttempt[]): Fold[] {
  const folds = new Map<number, Fold>();
  const ordered = attempts
    .filter((a) => a.webhookId !== undefined)
    .sort((a, b) => a.outcome.startedAt.getTime() - b.outcome.startedAt.getTime());
  for (const { webhookId, outcome, deliveryId, attempt } of ordered) {
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
        blamed: null,
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
      // A 410 disables at once: that attempt is the cause, whatever failed after it.
      if (!fold.gone) fold.blamed = { deliveryId, attempt };
      if (outcome.responseStatus === 410) fold.gone = true;
    }
  }
  return [...folds.values()].sort((a, b) => a.id - b.id);
}

/**
 * Applies the folds to the endpoints' health counters; answers the counters as updated. One
 * statement whatever the batch, after a lock of the endpoint rows in id order (lockRowsInIdOrder,
 * PostgreSQL only), so two processes recording for the same endpoints queue up instead of
 * deadlocking. The lock is FOR NO KEY UPDATE, as the UPDATE's own: FOR UPDATE would also block the
 * foreign-key checks (KEY SHARE) of a fan-out inserting deliveries for several endpoints, and the
 * two could deadlock (seen with two processes). (PostgreSQL runs this only when a lease was lost
 * mid-batch; its usual path is the one statement of recordOnPostgres.)
 */
async function recordEndpointHealth(
  trx: Transaction<Database>,
  folds: readonly Fold[],
): Promise<HealthRow[]> {
  if (folds.length === 0) return [];
  await lockRowsInIdOrder(
    trx,
    "webhooks",
    folds.map((f) => f.id),
  );
  const values = sql.join(
    folds.map(
      (f) =>
        sql`(CAST(${f.id} AS bigint), CAST(${f.hadSuccess ? 1 : 0} AS integer), CAST(${f.failuresAfter} AS integer), CAST(${f.firstFailureAfter} AS bigint), CAST(${f.lastSuccessAt} AS bigint), CAST(${f.lastFailureAt} AS bigint), CAST(${f.lastError} AS text))`,
    ),
  );
  // The batch names its id `webhook_id`, so RETURNING's bare names are the endpoint's columns on
  // both databases (SQLite's RETURNING names the updated table's columns bare; on PostgreSQL a
  // bare `id` of both would be ambiguous).
  const { rows } = await sql<{
    id: number | string;
    enabled: number;
    consecutive_failures: number;
    failing_since: number | string | null;
  }>`
    UPDATE webhooks AS w
    SET ${sql.raw(HEALTH_SET)}
    FROM (
      SELECT column1 AS webhook_id, column2 AS had_success, column3 AS failures,
        column4 AS first_failure, column5 AS last_success, column6 AS last_failure,
        column7 AS last_error
      FROM (VALUES ${values}) AS batch
    ) AS v
    WHERE w.id = v.webhook_id
    RETURNING id, enabled, consecutive_failures, failing_since
  `.execute(trx);
  return rows.map((row) => ({
    id: Number(row.id),
    enabled: row.enabled === 1,
    consecutiveFailures: row.consecutive_failures,
    failingSince: row.failing_since === null ? null : Number(row.failing_since),
  }));
}

/**
 * Disables the endpoints that answered 410 Gone or whose run of failures meets the auto-disable
 * rule: at least `minFailures` attempts in a row, the first more than `afterMs` ago. Decided from
 * the counters the health update answered, so the statement runs only when some endpoint is to be
 * disabled (it checks the rule again against the row). Answers the endpoints it disabled (only
 * ones that were enabled: a test delivery to a disabled endpoint changes nothing).
 */
async function disableEndpoints(
  trx: Transaction<Database>,
  folds: readonly Fold[],
  health: readonly HealthRow[],
  now: number,
  rule: AutoDisableRule | undefined,
): Promise<DisabledEndpoint[]> {
  const ruleOn = rule !== undefined && rule.minFailures > 0 && rule.afterMs > 0;
  const gone = folds.filter((f) => f.gone).map((f) => f.id);
  const due = health.filter(
    (h) =>
      h.enabled &&
      (gone.includes(h.id) ||
        (ruleOn &&
          h.consecutiveFailures >= rule.minFailures &&
          h.failingSince !== null &&
          h.failingSince < now - rule.afterMs)),
  );
  if (due.length === 0) return [];
  const ids = folds.map((f) => f.id);
  const goneList = gone.length === 0 ? sql`NULL` : sql.join(gone);
  const failing = ruleOn
    ? sql`(id IN (${sql.join(ids)}) AND consecutive_failures >= ${rule.minFailures}
        AND failing_since < ${now - rule.afterMs})`
    : sql`1 = 0`;
  // The attempt each endpoint's disable blames (its 410, or the failure that met the rule).
  const blamed = folds.filter((f) => f.blamed !== null);
  const blame = (column: "deliveryId" | "attempt", type: "bigint" | "integer") =>
    blamed.length === 0
      ? sql`NULL`
      : sql`CASE ${sql.join(
          blamed.map(
            (f) => sql`WHEN id = ${f.id} THEN CAST(${f.blamed![column]} AS ${sql.raw(type)})`,
          ),
          sql` `,
        )} END`;
  const { rows } = await sql<{ id: number | string; name: string; disabled_reason: string }>`
    UPDATE webhooks
    SET enabled = 0, disabled_at = ${now}, updated_at = ${now},
      disabled_reason = CASE WHEN id IN (${goneList}) THEN 'gone' ELSE 'auto_failing' END,
      disabled_delivery_id = ${blame("deliveryId", "bigint")},
      disabled_attempt = ${blame("attempt", "integer")}
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
