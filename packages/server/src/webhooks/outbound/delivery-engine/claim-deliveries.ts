import { sql, type Kysely, type QueryResult } from "kysely";
import { compiledOnce, executeNamed } from "../../../db/compiled-query.js";
import { byDialect, type PerDialect } from "../../../db/dialect.js";
import type {
  Database,
  DeliveryStatus,
  PayloadFormat,
  SignatureScheme,
} from "../../../db/schema.js";

/** A delivery this worker now holds under a lease, with what is needed to send it. */
export interface ClaimedDelivery {
  id: number;
  webhook_id: number;
  event: string;
  /** The frozen envelope bytes (UTF-8 JSON). */
  body: string;
  status: DeliveryStatus;
  /** Attempts made before this one. */
  attempts: number;
  url: string;
  secret_ciphertext: string;
  /** Null only on rows inserted by hand (tests). */
  event_id: string | null;
  signature_scheme: SignatureScheme;
  headers_ciphertext: string | null;
  /** The endpoint's body format at claim time (migration 021). */
  payload_format: PayloadFormat;
  /** 1: the attempt carries a traceparent continuing `trace_parent`. */
  trace_context: number;
  /** The trace of the request that caused the event; null outside a request or before 021. */
  trace_parent: string | null;
  trace_state: string | null;
  /** The old secret while a rotation overlap lasts; null once it has expired. */
  previous_secret_ciphertext: string | null;
  /** The endpoint's sealed `auth` and `tls` (migration 022); null without. */
  auth_ciphertext: string | null;
  tls_ciphertext: string | null;
  /** The sealed ed25519 private key (standard-webhooks-ed25519); null before the first pair. */
  signing_key_ciphertext: string | null;
  /** The old private key while a key rotation overlap lasts; null once it has expired. */
  previous_signing_key_ciphertext: string | null;
  /**
   * For an endpoint with a rate cap: the start of the send slot this claim reserved for the row
   * (within RATE_HORIZON_MS of now); send it then, not before. Null without a cap.
   */
  send_at: number | null;
  /** The delivery's ordered lane (lane-of.ts); null for an endpoint without ordering. */
  lane: number | null;
}

/**
 * How far ahead a claim reserves send slots of a rate-capped endpoint. Short, so a capped
 * endpoint holds few rows (and send slots) at a time; always far shorter than a lease.
 */
export const RATE_HORIZON_MS = 1_000;

export interface ClaimOptions {
  /** Most rows to take. */
  limit: number;
  /** How long the rows stay ours; must outlast one attempt plus its recording. */
  leaseMs: number;
  /** Written to `locked_by`; recording checks it. */
  workerId: string;
  now: number;
  /** The most rows of one endpoint a claim takes (the ceiling of every room). */
  perEndpointLimit: number;
  /**
   * How many rows of an endpoint this claim may take, by endpoint id (the worker's free room in
   * the endpoint's window: see endpoint-circuits.ts); 0 skips the endpoint.
   */
  roomByEndpoint?: ReadonlyMap<number, number>;
  /** The room of an endpoint absent from `roomByEndpoint`. Default: `perEndpointLimit`. */
  defaultRoom?: number;
  /**
   * Where the walk over an ordered endpoint's lanes starts, by endpoint id: after this lane
   * (`nextLaneCursors` gives it from a claim's rows). Absent: from the first lane. PostgreSQL only;
   * SQLite's claim walks every lane.
   */
  laneCursors?: ReadonlyMap<number, number>;
  /** Which PostgreSQL claim to run, updated by it (absent: always the full claim). */
  mode?: ClaimMode;
}

/**
 * Takes up to `limit` due deliveries and leases them to `workerId`.
 *
 * Due: PENDING or FAILED, `next_attempt_at <= now`, and no live lease (`locked_until` null or past,
 * so a crashed worker's rows come back once its lease runs out). Deliveries of a disabled endpoint
 * stay queued and are skipped until it is enabled again; the test event is the exception (it is
 * sent even when the endpoint is disabled: docs/webhooks.md, "Test delivery"). An endpoint whose
 * ownership check is pending (`verification = 'pending'`, docs/webhooks.md, "Ownership check") is
 * skipped the same way, test deliveries included, but for its WEBHOOK_VERIFICATION challenges,
 * which come from a partial index of their own (as the tests do) and are outside its lanes: the
 * lanes wait for the check, and the check never waits for a lane.
 *
 * Per-endpoint room: each endpoint gets no more than its room (`roomByEndpoint`, else
 * `defaultRoom`, never over `perEndpointLimit`). Fair across endpoints: the claim takes every
 * endpoint's oldest due row before any endpoint's second, and so on (a round robin), and at each
 * round first attempts before retries; within one endpoint, oldest first. So an endpoint with a
 * long backlog, or one whose deliveries keep failing, cannot take a claim from the others.
 *
 * Shape: the statement walks the enabled endpoints that have room and, for each, seeks its oldest
 * due rows through the (webhook_id, next_attempt_at) index, then keeps the oldest `limit` of
 * those. Test deliveries to disabled endpoints come from a small partial index of their own. So
 * neither a slow endpoint at its cap nor a disabled one with a long backlog costs the claim
 * anything. (Measured: the first version scanned all due rows in time order and skipped the
 * capped endpoint's; with 5,000 queued for one endpoint each claim took 0.5 ms and delivery ran
 * at a third of this shape's rate.)
 *
 * Why one statement, and why two texts: the claim must be atomic across processes, and the two
 * databases get there by different means (the choice is `byDialect`'s). On PostgreSQL, `FOR
 * UPDATE SKIP LOCKED` lets concurrent workers each lock a disjoint set without waiting on one
 * another, and the lease columns are written in the same statement; each endpoint's seek locks no
 * more rows than this claim can take (its room, at most `limit`), so a concurrent worker does not
 * find rows locked that nobody takes. SQLite has one writer at a time: a single `UPDATE ... RETURNING` opens
 * its write transaction before it reads, so it is atomic by itself, and a second process waits on
 * `busy_timeout` rather than claiming the same rows. SQLite does not allow a LIMIT that depends on
 * the outer row, so there each endpoint's seek takes up to the cap and a window function trims
 * it to the endpoint's room.
 *
 * Rate caps (`max_per_second`, shared by every process): each capped endpoint keeps
 * `rate_next_at`, the start of its next free send slot; slots are 1000 / cap ms apart. A claim
 * takes no more of its rows than there are slots before now + RATE_HORIZON_MS, writes each row's
 * slot into its `next_attempt_at` (answered as `send_at`; the dispatcher waits for it), and moves
 * `rate_next_at` past the slots it took. Deliveries over the cap stay due and wait: they are
 * never failed. On PostgreSQL the capped endpoints with due rows are locked (`FOR NO KEY UPDATE`: it
 * does not block the foreign-key checks of deliveries being queued meanwhile; in id
 * order) for the claim, so two processes never hand out the same slots, and the slots advance in
 * the same statement; on SQLite the claim and the advance share one transaction. A crash between
 * reserving a slot and sending costs only that slot: the row's lease expires and it is claimed
 * again into a later one.
 *
 * Ordered lanes (docs/webhooks.md, "Ordered delivery"): a delivery with a `lane` is taken only
 * when it is its lane's head, the lowest unfinished id of (endpoint, lane), and that head is due
 * and not under a live lease. So one attempt per lane is in flight, in id order, across processes:
 * a head being sent (or left leased by a crashed process) holds its lane until its lease is gone,
 * and a failing head holds it through its retries, until it ends (SUCCESS or EXHAUSTED: its
 * `next_attempt_at` is cleared and it leaves the lane's index). The heads come from the partial
 * index `webhook_deliveries_lane` (webhook_id, lane, id) by a skip scan (a recursive CTE: from
 * each lane to the next, one seek each, whose first row is the lane's head on PostgreSQL; SQLite
 * seeks the head apart): a held lane costs a claim one or two seeks, whatever is queued behind it.
 * On PostgreSQL the walk starts after the lane where this process's last claim of the endpoint
 * stopped (`laneCursors`), goes round once, and stops as soon as it has found as many free heads
 * as the endpoint has room for: a claim seeks about as many lanes as it takes, not all of them
 * (measured: a backlog over 100 rooms drained at 61% of an unordered endpoint's rate walking every
 * lane, level with it stopping early), and successive claims take the lanes in turn. Deliveries without a lane are in the other index
 * only (`webhook_deliveries_endpoint_due`, which leaves lanes out), so an endpoint without
 * ordering is claimed exactly as before. On PostgreSQL the head is locked `FOR UPDATE SKIP
 * LOCKED`: a concurrent claim that read the same head skips it, and one whose snapshot is older
 * than a lease or a finished head re-checks that row when it locks it (READ COMMITTED), so it
 * never takes a head another process holds, nor the row after a head it saw unfinished.
 *
 * Two claims (PostgreSQL): the full statement above has some 200 plan nodes, and PostgreSQL starts
 * and ends every one of them at each execution, and plans it again (about 3 ms) for the first five
 * executions on each connection; measured, that made a claim of 5 rows cost its backend 0.7-0.9 ms
 * where the statement before lanes and challenges cost 0.45-0.6. So a process runs a plain claim
 * (the endpoints' unordered rows and test deliveries: no lane walk, no heads, no challenges of
 * pending or disabled endpoints) while nothing needs more. Each claim also answers, in `more`,
 * whether anything only the full claim takes is there: an unfinished delivery in any lane, or a
 * challenge due (two probes of partial indexes). The next claim is full when the last one said so
 * or took nothing (`ClaimMode`), and a plain claim that takes nothing runs the full one at once;
 * so a lane or a challenge waits at most for one more claim, and the plain claim, which never
 * takes a row that has a lane, cannot break a lane's order.
 *
 * Commit without a flush (PostgreSQL): the claim's transaction sets `synchronous_commit = off`
 * for itself (`set_config(..., true)` lasts until its commit), so it does not wait for its WAL
 * record to reach the disk, which on a busy machine was most of a claim's time (about 4 ms of
 * 8). Nothing the engine promises rests on that flush: the lease is visible to every other
 * session at once, as with any commit, and a later flushed commit (this batch's recording, which
 * stays synchronous) flushes the claim's record first, the WAL being written in order. Only a
 * crash of the database server itself can lose a claim not flushed yet (at most a few hundred
 * milliseconds of them), and a lost claim is a lease that never was: the row is due again and is
 * claimed again, so a delivery may be sent twice (at least once, as after a process crash), and
 * a capped endpoint's send slots reserved by it may be handed out a second time.
 */
export async function claimDeliveries(
  db: Kysely<Database>,
  options: ClaimOptions,
): Promise<ClaimedDelivery[]> {
  const { limit, workerId, now, perEndpointLimit } = options;
  if (limit <= 0) return [];
  return byDialect(db, CLAIM)(
    db,
    {
      now,
      limit,
      workerId,
      perEndpointLimit,
      defaultRoom: Math.min(options.defaultRoom ?? perEndpointLimit, perEndpointLimit),
      until: now + options.leaseMs,
      horizon: now + RATE_HORIZON_MS,
      // {"<endpoint id>": room}; read in SQL with a JSON accessor, so the statement text stays the
      // same whatever the number of endpoints listed (one prepared plan).
      rooms: JSON.stringify(Object.fromEntries(options.roomByEndpoint ?? [])),
      cursors: JSON.stringify(Object.fromEntries(options.laneCursors ?? [])),
    },
    options.mode,
  );
}

/**
 * Which claim the next one is (PostgreSQL; see claimDeliveries, "Two claims"), kept by the
 * dispatcher of a process across its claims and updated by each claim.
 */
export interface ClaimMode {
  /** True: the full claim. Starts true. */
  full: boolean;
}

/**
 * The lane cursors after a claim: for each ordered endpoint with rows in it, the last lane taken
 * in the order the claim walked (upwards from the old cursor, then round from the first lane), so
 * that the next claim starts after it.
 */
export function nextLaneCursors(
  cursors: Map<number, number>,
  rows: readonly Pick<ClaimedDelivery, "webhook_id" | "lane">[],
): void {
  const last = new Map<number, number>();
  const distance = (webhookId: number, lane: number) => {
    const from = cursors.get(webhookId) ?? -1;
    return lane > from ? lane - from : lane - from + Number.MAX_SAFE_INTEGER / 2;
  };
  for (const { webhook_id, lane } of rows) {
    if (lane === null) continue;
    const seen = last.get(webhook_id);
    if (seen === undefined || distance(webhook_id, lane) > distance(webhook_id, seen))
      last.set(webhook_id, lane);
  }
  for (const [webhookId, lane] of last) cursors.set(webhookId, lane);
}

/** A claim's values, as both statements take them. */
interface ClaimInput {
  now: number;
  limit: number;
  workerId: string;
  perEndpointLimit: number;
  /** The room of an endpoint not in `rooms`. */
  defaultRoom: number;
  /** The lease's end. */
  until: number;
  /** The end of the rate caps' horizon. */
  horizon: number;
  /** The rooms by endpoint, as JSON. */
  rooms: string;
  /** The lane cursors by endpoint, as JSON. */
  cursors: string;
}

/** The claim is two statements, for the reasons above (claimDeliveries). */
const CLAIM: PerDialect<
  (
    db: Kysely<Database>,
    input: ClaimInput,
    mode: ClaimMode | undefined,
  ) => Promise<ClaimedDelivery[]>
> = {
  postgres: claimOnPostgres,
  sqlite: claimOnSqlite,
};

/**
 * The PostgreSQL claim: PG_CLAIM or PG_CLAIM_PLAIN (see claimDeliveries, "Two claims"), each one
 * named prepared statement.
 */
async function claimOnPostgres(
  db: Kysely<Database>,
  input: ClaimInput,
  mode: ClaimMode | undefined,
): Promise<ClaimedDelivery[]> {
  const { now, perEndpointLimit, rooms, horizon, limit, until, workerId, defaultRoom, cursors } =
    input;
  const values = [now, perEndpointLimit, rooms, horizon, limit, until, workerId, defaultRoom];
  const full = () =>
    executeNamed<ClaimedDelivery & { more: boolean }>(db, {
      name: "parley_claim_deliveries",
      text: PG_CLAIM,
      values: [...values, cursors],
    });
  let rows: Array<ClaimedDelivery & { more: boolean }>;
  if (mode?.full === false) {
    rows = await executeNamed<ClaimedDelivery & { more: boolean }>(db, {
      name: "parley_claim_deliveries_plain",
      text: PG_CLAIM_PLAIN,
      values,
    });
    // Nothing plain was due: what is due may be what only the full claim takes.
    if (rows.length === 0) rows = await full();
  } else {
    rows = await full();
  }
  // No rows: nothing learnt; the next claim is full until one says nothing needs it.
  if (mode) mode.full = rows.length === 0 || rows[0]!.more;
  return rows.map(numericSendAt);
}

/** The SQLite claim: one `UPDATE ... RETURNING`, then the rate-capped endpoints' send slots. */
async function claimOnSqlite(db: Kysely<Database>, input: ClaimInput): Promise<ClaimedDelivery[]> {
  const { now, perEndpointLimit, limit } = input;
  const seek = Math.min(perEndpointLimit, limit);
  return db.transaction().execute(async (trx) => {
    const result = await sqliteClaimStatement(Math.trunc(seek), Math.trunc(limit))(trx, input);
    if (result.rows.length === 0) return [];
    // What the send needs of each endpoint, read once per endpoint in the claim's transaction
    // (not once per row), with its rate cap and the base of its send slots as the claim used them.
    const endpoints = new Map(
      (
        await readClaimedEndpoints(trx, {
          now,
          ids: JSON.stringify([...new Set(result.rows.map((row) => row.webhook_id))]),
        })
      ).rows.map((endpoint) => [endpoint.id, endpoint]),
    );
    // A rate-capped endpoint's rows, in the order the claim ranked them (next_attempt_at, id),
    // take its send slots from the base: the k-th (from 0) at base + k * 1000 / cap, integer ms.
    const capped = new Map<number, SqliteClaimedRow[]>();
    for (const row of result.rows) {
      if (endpoints.get(row.webhook_id)?.rate == null) continue;
      const rows = capped.get(row.webhook_id);
      if (rows) rows.push(row);
      else capped.set(row.webhook_id, [row]);
    }
    const slots = new Map<number, number>();
    for (const [webhookId, rows] of capped) {
      const { rate, base } = endpoints.get(webhookId)!;
      rows.sort((a, b) => a.next_attempt_at - b.next_attempt_at || a.id - b.id);
      rows.forEach((row, k) => slots.set(row.id, base + Math.trunc((k * 1000) / rate!)));
    }
    if (slots.size > 0) {
      // Each row waits for its slot (a lease outlives it), and the endpoint's next free slot moves
      // past the slots just taken, from the same base (same transaction).
      const rowSlots = sql.join([...slots].map(([id, at]) => sql`(${id}, ${at})`));
      await sql`
        UPDATE webhook_deliveries SET next_attempt_at = v.slot
        FROM (SELECT column1 AS id, column2 AS slot FROM (VALUES ${rowSlots})) AS v
        WHERE webhook_deliveries.id = v.id
      `.execute(trx);
      const taken = sql.join([...capped].map(([id, rows]) => sql`(${id}, ${rows.length})`));
      await sql`
        UPDATE webhooks
        SET rate_next_at = max(coalesce(rate_next_at, 0), ${now}) + (v.taken * 1000) / max_per_second
        FROM (SELECT column1 AS id, column2 AS taken FROM (VALUES ${taken})) AS v
        WHERE webhooks.id = v.id AND max_per_second IS NOT NULL
      `.execute(trx);
    }
    // Written out, not spread: a rest pattern and two spreads over 25 columns per row cost more
    // than the rest of this function.
    return result.rows.map((row): ClaimedDelivery => {
      const endpoint = endpoints.get(row.webhook_id);
      // Read in the transaction that leased the row, whose endpoint's deletion would have taken it.
      if (!endpoint)
        throw new Error(`claimed delivery ${row.id} has no endpoint ${row.webhook_id}`);
      return {
        id: row.id,
        webhook_id: row.webhook_id,
        event: row.event,
        body: row.body,
        status: row.status,
        attempts: row.attempts,
        event_id: row.event_id,
        lane: row.lane,
        trace_parent: row.trace_parent,
        trace_state: row.trace_state,
        url: endpoint.url,
        secret_ciphertext: endpoint.secret_ciphertext,
        signature_scheme: endpoint.signature_scheme,
        headers_ciphertext: endpoint.headers_ciphertext,
        payload_format: endpoint.payload_format,
        trace_context: endpoint.trace_context,
        auth_ciphertext: endpoint.auth_ciphertext,
        tls_ciphertext: endpoint.tls_ciphertext,
        previous_secret_ciphertext: endpoint.previous_secret_ciphertext,
        signing_key_ciphertext: endpoint.signing_key_ciphertext,
        previous_signing_key_ciphertext: endpoint.previous_signing_key_ciphertext,
        send_at: slots.get(row.id) ?? null,
      };
    });
  });
}

/** A row as the SQLite claim's UPDATE returns it (the endpoint's columns come apart). */
type SqliteClaimedRow = Omit<ClaimedDelivery, keyof SqliteEndpointColumns | "send_at"> & {
  next_attempt_at: number;
};

/** What the SQLite claim reads of each endpoint of its rows. */
type SqliteEndpointColumns = Pick<
  ClaimedDelivery,
  | "url"
  | "secret_ciphertext"
  | "signature_scheme"
  | "headers_ciphertext"
  | "payload_format"
  | "trace_context"
  | "auth_ciphertext"
  | "tls_ciphertext"
  | "previous_secret_ciphertext"
  | "signing_key_ciphertext"
  | "previous_signing_key_ciphertext"
>;
type SqliteClaimedEndpoint = SqliteEndpointColumns & {
  id: number;
  /** The cap when the endpoint is enabled and checked; null otherwise (no slots). */
  rate: number | null;
  base: number;
};

/** The SQLite claim's values (ClaimInput without the lane cursors, which it does not use). */
type SqliteClaimArgs = Omit<ClaimInput, "limit" | "cursors">;

/**
 * The SQLite claim's UPDATE for one pair of LIMITs, built and compiled once (the statement is long:
 * building and compiling it through Kysely at every claim cost more than SQLite running it).
 *
 * INDEXED BY pins the two seeks to their indexes: left to itself, SQLite's planner took the
 * general due index for the test deliveries (a walk over every due row at each claim) or, once
 * the database had statistics, another plan 12x slower at 300,000 finished rows. CROSS JOIN makes
 * SQLite walk the endpoints and seek each one's rows, instead of scanning the deliveries and
 * testing each against the correlated list. The two LIMITs are literals: with both bound as
 * parameters SQLite ran this statement 8x slower (80 us instead of 10 us, same plan); they are
 * integers computed by the claim, and each pair is one statement.
 *
 * It sets only the lease: `next_attempt_at` stays out of the SET (a rate-capped row's send slot is
 * written apart, by claimOnSqlite), because SQLite rewrites every index that names a column the
 * SET assigns, whatever the value: with it, each claimed row cost three more index rewrites (the
 * due indexes), and the endpoint's columns are read once per endpoint, not per row in RETURNING
 * (a claim of 16 rows: 810-900 µs before both, 360-480 after, measured alone).
 */
const sqliteClaims = new Map<
  string,
  (db: Kysely<Database>, args: SqliteClaimArgs) => Promise<QueryResult<SqliteClaimedRow>>
>();
function sqliteClaimStatement(seek: number, limit: number) {
  const key = `${seek}/${limit}`;
  let statement = sqliteClaims.get(key);
  if (!statement) {
    statement = compiledOnce<SqliteClaimedRow, SqliteClaimArgs>((db, slot) => {
      const raw = sql<SqliteClaimedRow>`
      WITH RECURSIVE endpoints AS MATERIALIZED (
        SELECT id, room, base, rate FROM (
          SELECT w.id, w.max_per_second AS rate,
            max(coalesce(w.rate_next_at, 0), ${slot("now")}) AS base,
            min(
              ${slot("perEndpointLimit")},
              coalesce(json_extract(${slot("rooms")}, '$."' || w.id || '"'), ${slot("defaultRoom")}),
              CASE WHEN w.max_per_second IS NULL THEN ${slot("perEndpointLimit")}
                WHEN max(coalesce(w.rate_next_at, 0), ${slot("now")}) > ${slot("horizon")} THEN 0
                ELSE ((${slot("horizon")} - max(coalesce(w.rate_next_at, 0), ${slot("now")})) * w.max_per_second) / 1000 + 1 END
            ) AS room
          FROM webhooks w
          WHERE w.enabled = 1 AND w.verification <> 'pending'
        )
        WHERE room > 0
      ),
      -- Every lane of these endpoints, by a skip scan: the first lane, then from each to the next.
      lanes(webhook_id, lane) AS (
        SELECT e.id, (
          SELECT min(x.lane) FROM webhook_deliveries x INDEXED BY webhook_deliveries_lane
          WHERE x.webhook_id = e.id AND x.lane IS NOT NULL AND x.next_attempt_at IS NOT NULL)
        FROM endpoints e
        UNION ALL
        SELECT l.webhook_id, (
          SELECT min(x.lane) FROM webhook_deliveries x INDEXED BY webhook_deliveries_lane
          WHERE x.webhook_id = l.webhook_id AND x.lane > l.lane
            AND x.lane IS NOT NULL AND x.next_attempt_at IS NOT NULL)
        FROM lanes l
        WHERE l.lane IS NOT NULL
      ),
      chosen AS MATERIALIZED (
        SELECT id, base, rate, rank FROM (
          SELECT c.id, c.next_attempt_at, c.attempts, c.room, c.base, c.rate,
            row_number() OVER (PARTITION BY c.webhook_id ORDER BY c.next_attempt_at, c.id) AS rank
          FROM (
            SELECT d.id, d.webhook_id, d.next_attempt_at, d.attempts, e.room, e.base, e.rate
            FROM endpoints e
            CROSS JOIN webhook_deliveries d ON d.id IN (
              SELECT x.id FROM webhook_deliveries x INDEXED BY webhook_deliveries_endpoint_due
              WHERE x.webhook_id = e.id
                AND x.lane IS NULL
                AND x.status IN ('PENDING', 'FAILED')
                AND x.next_attempt_at IS NOT NULL
                AND x.next_attempt_at <= ${slot("now")}
                AND (x.locked_until IS NULL OR x.locked_until < ${slot("now")})
              ORDER BY x.next_attempt_at
              LIMIT ${sql.lit(seek)}
            )
            UNION ALL
            -- Each lane's head (its lowest unfinished id), when it is due and not leased.
            SELECT d.id, d.webhook_id, d.next_attempt_at, d.attempts, e.room, e.base, e.rate
            FROM lanes l
            JOIN endpoints e ON e.id = l.webhook_id
            CROSS JOIN webhook_deliveries d ON d.id = (
              SELECT min(h.id) FROM webhook_deliveries h INDEXED BY webhook_deliveries_lane
              WHERE h.webhook_id = l.webhook_id AND h.lane = l.lane
                AND h.lane IS NOT NULL AND h.next_attempt_at IS NOT NULL)
            WHERE l.lane IS NOT NULL
              AND d.status IN ('PENDING', 'FAILED')
              AND d.next_attempt_at <= ${slot("now")}
              AND (d.locked_until IS NULL OR d.locked_until < ${slot("now")})
            UNION ALL
            SELECT d.id, d.webhook_id, d.next_attempt_at, d.attempts,
              min(${slot("perEndpointLimit")},
                coalesce(json_extract(${slot("rooms")}, '$."' || d.webhook_id || '"'), ${slot("defaultRoom")})),
              NULL, NULL
            FROM webhook_deliveries d INDEXED BY webhook_deliveries_test_due
            WHERE d.event = 'WEBHOOK_TEST'
              AND d.status IN ('PENDING', 'FAILED')
              AND d.next_attempt_at <= ${slot("now")}
              AND (d.locked_until IS NULL OR d.locked_until < ${slot("now")})
              AND EXISTS (SELECT 1 FROM webhooks w
                WHERE w.id = d.webhook_id AND w.enabled = 0 AND w.verification <> 'pending')
            UNION ALL
            -- The ownership challenges of endpoints that are pending (nothing else of theirs
            -- goes) or disabled; an enabled, checked endpoint's are seeked above.
            SELECT d.id, d.webhook_id, d.next_attempt_at, d.attempts,
              min(${slot("perEndpointLimit")},
                coalesce(json_extract(${slot("rooms")}, '$."' || d.webhook_id || '"'), ${slot("defaultRoom")})),
              NULL, NULL
            FROM webhook_deliveries d INDEXED BY webhook_deliveries_verification_due
            WHERE d.event = 'WEBHOOK_VERIFICATION'
              AND d.status IN ('PENDING', 'FAILED')
              AND d.next_attempt_at <= ${slot("now")}
              AND (d.locked_until IS NULL OR d.locked_until < ${slot("now")})
              AND EXISTS (SELECT 1 FROM webhooks w
                WHERE w.id = d.webhook_id AND (w.enabled = 0 OR w.verification = 'pending'))
          ) c
        )
        WHERE rank <= room
        ORDER BY rank, attempts > 0, next_attempt_at, id
        LIMIT ${sql.lit(limit)}
      )
      UPDATE webhook_deliveries
      SET locked_until = ${slot("until")}, locked_by = ${slot("workerId")}
      WHERE id IN (SELECT id FROM chosen)
      RETURNING id, webhook_id, event, body, status, attempts, event_id, lane, next_attempt_at,
        trace_parent, trace_state
`;
      return { compile: () => raw.compile(db) };
    });
    sqliteClaims.set(key, statement);
  }
  return statement;
}

/** What the SQLite claim reads of its rows' endpoints (`ids`: their ids as a JSON array). */
const readClaimedEndpoints = compiledOnce<SqliteClaimedEndpoint, { now: number; ids: string }>(
  (db, slot) => {
    const raw = sql<SqliteClaimedEndpoint>`
          SELECT w.id, w.url, w.secret_ciphertext, w.signature_scheme, w.headers_ciphertext,
            w.payload_format, w.trace_context, w.auth_ciphertext, w.tls_ciphertext,
            CASE WHEN w.previous_secret_expires_at > ${slot("now")} THEN w.previous_secret_ciphertext END
              AS previous_secret_ciphertext,
            w.signing_key_ciphertext,
            CASE WHEN w.previous_signing_key_expires_at > ${slot("now")}
              THEN w.previous_signing_key_ciphertext END AS previous_signing_key_ciphertext,
            CASE WHEN w.enabled = 1 AND w.verification <> 'pending' THEN w.max_per_second END
              AS rate,
            max(coalesce(w.rate_next_at, 0), ${slot("now")}) AS base
          FROM webhooks w
          WHERE w.id IN (SELECT value FROM json_each(${slot("ids")}))
`;
    return { compile: () => raw.compile(db) };
  },
);

/**
 * The PostgreSQL claim, one statement of fixed text (a named prepared statement: planned once per
 * connection). $1 now, $2 the per-endpoint cap, $3 the rooms by endpoint (JSON), $4 the rate
 * horizon, $5 the most rows to take, $6 the lease's end, $7 the worker, $8 the room of an
 * endpoint not in $3, $9 the lane cursors by endpoint (JSON).
 */
const PG_CLAIM_HEAD = `
  WITH RECURSIVE unflushed AS (
    -- This statement's own transaction commits without waiting for its WAL flush: see above.
    SELECT set_config('synchronous_commit', 'off', true) AS setting
  ),
  -- Whether work only the full claim takes is there (see claimDeliveries, "Two claims"): an
  -- unfinished delivery in a lane, or an ownership challenge due. Two probes of partial indexes.
  more AS (
    SELECT EXISTS (
        SELECT 1 FROM webhook_deliveries x
        WHERE x.lane IS NOT NULL AND x.next_attempt_at IS NOT NULL)
      OR EXISTS (
        SELECT 1 FROM webhook_deliveries x
        WHERE x.event = 'WEBHOOK_VERIFICATION' AND x.next_attempt_at IS NOT NULL
          AND x.next_attempt_at <= $1::bigint) AS more
  ),
  capped AS (
    -- The capped endpoints first, then one probe each for a due row (LATERAL ... LIMIT 1): never
    -- a pass over the due rows of every endpoint to find the few capped ones.
    SELECT w.id, w.max_per_second AS rate,
      greatest(coalesce(w.rate_next_at, 0), $1::bigint) AS base
    FROM webhooks w
    WHERE w.enabled = 1 AND w.verification <> 'pending' AND w.max_per_second IS NOT NULL
      AND (EXISTS (
          SELECT 1 FROM webhook_deliveries x
          WHERE x.webhook_id = w.id AND x.lane IS NULL AND x.status IN ('PENDING', 'FAILED')
            AND x.next_attempt_at IS NOT NULL AND x.next_attempt_at <= $1::bigint)
        OR EXISTS (
          SELECT 1 FROM webhook_deliveries x
          WHERE x.webhook_id = w.id AND x.lane IS NOT NULL
            AND x.next_attempt_at IS NOT NULL AND x.next_attempt_at <= $1::bigint))
    ORDER BY w.id
    FOR NO KEY UPDATE OF w
  ),
  endpoints AS (
    SELECT id, room, base, rate FROM (
      SELECT w.id, c.base, c.rate,
        least(
          $2::int,
          coalesce(($3::jsonb ->> w.id::text)::int, $8::int),
          CASE WHEN c.id IS NULL THEN $2::int
            WHEN c.base > $4::bigint THEN 0
            ELSE (($4::bigint - c.base) * c.rate) / 1000 + 1 END
        ) AS room
      FROM webhooks w
      LEFT JOIN capped c ON c.id = w.id
      WHERE w.enabled = 1 AND w.verification <> 'pending'
        AND (w.max_per_second IS NULL OR c.id IS NOT NULL)
    ) e
    WHERE room > 0
  ),
  seeked AS (
    SELECT c.id, c.webhook_id, c.next_attempt_at, c.attempts, e.room, e.base, e.rate
    FROM endpoints e
    CROSS JOIN LATERAL (
      SELECT d.id, d.webhook_id, d.next_attempt_at, d.attempts
      FROM webhook_deliveries d
      WHERE d.webhook_id = e.id
        AND d.lane IS NULL
        AND d.status IN ('PENDING', 'FAILED')
        AND d.next_attempt_at IS NOT NULL
        AND d.next_attempt_at <= $1::bigint
        AND (d.locked_until IS NULL OR d.locked_until < $1::bigint)
      ORDER BY d.next_attempt_at
      LIMIT least(e.room, $5::int)
      FOR UPDATE SKIP LOCKED
    ) c
  ),
`;
const PG_CLAIM_LANES = `  -- The lanes of these endpoints, by a skip scan from the lane after the endpoint's cursor ($9:
  -- where this process's last claim of it stopped), wrapping around once, and stopping as soon as
  -- the endpoint's room is filled with free heads (each step's first row in (lane, id) order is
  -- that lane's head, its lowest unfinished id: one seek per lane finds it and tells whether it
  -- is due and free). So a claim seeks about as many lanes as it can take, not every lane, and
  -- successive claims go round the lanes: none waits behind lanes of lower number.
  lanes AS (
    SELECT e.id AS webhook_id, least(e.room, $5::int) AS room,
      coalesce(($9::jsonb ->> e.id::text)::bigint, -1) AS cursor,
      f.lane, f.id AS head, f.wrapped, f.free::int AS found
    FROM endpoints e
    CROSS JOIN LATERAL (
      (SELECT x.lane, x.id, false AS wrapped, (x.status IN ('PENDING', 'FAILED') AND x.next_attempt_at <= $1::bigint
          AND (x.locked_until IS NULL OR x.locked_until < $1::bigint)) AS free
        FROM webhook_deliveries x
        WHERE x.webhook_id = e.id AND x.lane IS NOT NULL AND x.next_attempt_at IS NOT NULL
          AND x.lane > coalesce(($9::jsonb ->> e.id::text)::bigint, -1)
        ORDER BY x.lane, x.id LIMIT 1)
      UNION ALL
      (SELECT x.lane, x.id, true AS wrapped, (x.status IN ('PENDING', 'FAILED') AND x.next_attempt_at <= $1::bigint
          AND (x.locked_until IS NULL OR x.locked_until < $1::bigint)) AS free
        FROM webhook_deliveries x
        WHERE x.webhook_id = e.id AND x.lane IS NOT NULL AND x.next_attempt_at IS NOT NULL
        ORDER BY x.lane, x.id LIMIT 1)
      LIMIT 1
    ) f
    UNION ALL
    SELECT l.webhook_id, l.room, l.cursor, n.lane, n.id, l.wrapped OR n.wrapped,
      l.found + n.free::int
    FROM lanes l
    CROSS JOIN LATERAL (
      (SELECT x.lane, x.id, false AS wrapped, (x.status IN ('PENDING', 'FAILED') AND x.next_attempt_at <= $1::bigint
          AND (x.locked_until IS NULL OR x.locked_until < $1::bigint)) AS free
        FROM webhook_deliveries x
        WHERE x.webhook_id = l.webhook_id AND x.lane > l.lane
          AND x.lane IS NOT NULL AND x.next_attempt_at IS NOT NULL
        ORDER BY x.lane, x.id LIMIT 1)
      UNION ALL
      (SELECT x.lane, x.id, true AS wrapped, (x.status IN ('PENDING', 'FAILED') AND x.next_attempt_at <= $1::bigint
          AND (x.locked_until IS NULL OR x.locked_until < $1::bigint)) AS free
        FROM webhook_deliveries x
        WHERE NOT l.wrapped AND x.webhook_id = l.webhook_id
          AND x.lane IS NOT NULL AND x.next_attempt_at IS NOT NULL
        ORDER BY x.lane, x.id LIMIT 1)
      LIMIT 1
    ) n
    -- Stop once the room is filled, or once round to where the walk began.
    WHERE l.found < l.room AND NOT ((l.wrapped OR n.wrapped) AND n.lane > l.cursor)
  ),
  -- Each lane's head, when it is due and not leased; per endpoint no more than its room, so no
  -- head is locked that this claim does not take.
  heads AS (
    SELECT c.id, c.webhook_id, c.next_attempt_at, c.attempts, e.room, e.base, e.rate
    FROM endpoints e
    CROSS JOIN LATERAL (
      SELECT d.id, d.webhook_id, d.next_attempt_at, d.attempts
      FROM lanes l
      JOIN webhook_deliveries d ON d.id = l.head
      WHERE l.webhook_id = e.id
        AND d.status IN ('PENDING', 'FAILED')
        AND d.next_attempt_at <= $1::bigint
        AND (d.locked_until IS NULL OR d.locked_until < $1::bigint)
      ORDER BY d.next_attempt_at, d.id
      LIMIT least(e.room, $5::int)
      FOR UPDATE OF d SKIP LOCKED
    ) c
    WHERE e.id IN (SELECT webhook_id FROM lanes)
  ),
`;
const PG_CLAIM_TESTS = `  -- Test deliveries go out even to a disabled endpoint (FOR UPDATE is not allowed inside a
  -- UNION, hence two CTEs); a disabled endpoint has no pace to keep.
  tests AS (
    SELECT d.id, d.webhook_id, d.next_attempt_at, d.attempts,
      least($2::int, coalesce(($3::jsonb ->> d.webhook_id::text)::int, $8::int)) AS room,
      CAST(NULL AS bigint) AS base, CAST(NULL AS integer) AS rate
    FROM webhook_deliveries d
    WHERE d.event = 'WEBHOOK_TEST'
      AND d.status IN ('PENDING', 'FAILED')
      AND d.next_attempt_at <= $1::bigint
      AND (d.locked_until IS NULL OR d.locked_until < $1::bigint)
      AND EXISTS (SELECT 1 FROM webhooks w
        WHERE w.id = d.webhook_id AND w.enabled = 0 AND w.verification <> 'pending')
    ORDER BY d.next_attempt_at
    LIMIT $5::int
    FOR UPDATE SKIP LOCKED
  ),
`;
const PG_CLAIM_CHALLENGES = `  -- The ownership challenges of endpoints that are pending (nothing else of theirs goes) or
  -- disabled; an enabled, checked endpoint's are seeked with its other deliveries.
  challenges AS (
    SELECT d.id, d.webhook_id, d.next_attempt_at, d.attempts,
      least($2::int, coalesce(($3::jsonb ->> d.webhook_id::text)::int, $8::int)) AS room,
      CAST(NULL AS bigint) AS base, CAST(NULL AS integer) AS rate
    FROM webhook_deliveries d
    WHERE d.event = 'WEBHOOK_VERIFICATION'
      AND d.status IN ('PENDING', 'FAILED')
      AND d.next_attempt_at <= $1::bigint
      AND (d.locked_until IS NULL OR d.locked_until < $1::bigint)
      AND EXISTS (SELECT 1 FROM webhooks w
        WHERE w.id = d.webhook_id AND (w.enabled = 0 OR w.verification = 'pending'))
    ORDER BY d.next_attempt_at
    LIMIT $5::int
    FOR UPDATE SKIP LOCKED
  ),
`;
const PG_CLAIM_TAIL = `  chosen AS (
    SELECT id, webhook_id, base, rate, rank FROM (
      SELECT c.id, c.webhook_id, c.next_attempt_at, c.attempts, c.room, c.base, c.rate,
        row_number() OVER (PARTITION BY c.webhook_id ORDER BY c.next_attempt_at, c.id) AS rank
      FROM candidates c
    ) ranked
    WHERE rank <= room
    -- A round robin over the endpoints (every one's first row, then every one's second), first
    -- attempts before retries at each round.
    ORDER BY rank, attempts > 0, next_attempt_at, id
    LIMIT $5::int
  ),
  paced AS (
    UPDATE webhooks w
    SET rate_next_at = p.base + (p.taken * 1000) / p.rate
    FROM (
      SELECT webhook_id, count(*) AS taken, min(base) AS base, min(rate) AS rate
      FROM chosen WHERE rate IS NOT NULL GROUP BY webhook_id
    ) p
    WHERE w.id = p.webhook_id
    RETURNING w.id
  )
  UPDATE webhook_deliveries d
  SET locked_until = $6::bigint, locked_by = $7::text,
    next_attempt_at = CASE WHEN chosen.rate IS NULL THEN d.next_attempt_at
      ELSE chosen.base + ((chosen.rank - 1) * 1000) / chosen.rate END
  FROM chosen, webhooks w, unflushed, more
  WHERE d.id = chosen.id AND w.id = d.webhook_id
  RETURNING d.id, d.webhook_id, d.event, d.body, d.status, d.attempts, d.event_id, d.lane, w.url,
    w.secret_ciphertext, w.signature_scheme, w.headers_ciphertext, w.payload_format,
    w.trace_context, d.trace_parent, d.trace_state, w.auth_ciphertext, w.tls_ciphertext,
    CASE WHEN w.previous_secret_expires_at > $1::bigint THEN w.previous_secret_ciphertext END
      AS previous_secret_ciphertext,
    w.signing_key_ciphertext,
    CASE WHEN w.previous_signing_key_expires_at > $1::bigint THEN w.previous_signing_key_ciphertext END
      AS previous_signing_key_ciphertext,
    CASE WHEN chosen.rate IS NULL THEN NULL ELSE d.next_attempt_at END AS send_at, more.more
`;

/** The full claim: every kind of row ($9, the lane cursors, used). */
const PG_CLAIM =
  PG_CLAIM_HEAD +
  PG_CLAIM_LANES +
  PG_CLAIM_TESTS +
  PG_CLAIM_CHALLENGES +
  `  candidates AS (
    SELECT * FROM seeked UNION ALL SELECT * FROM heads UNION ALL SELECT * FROM tests
    UNION ALL SELECT * FROM challenges
  ),
` +
  PG_CLAIM_TAIL;

/** The plain claim: no lanes, no challenges of pending or disabled endpoints ($1 to $8). */
const PG_CLAIM_PLAIN =
  PG_CLAIM_HEAD +
  PG_CLAIM_TESTS +
  `  candidates AS (
    SELECT * FROM seeked UNION ALL SELECT * FROM tests
  ),
` +
  PG_CLAIM_TAIL;

/**
 * pg answers BIGINT as text. The row is pg's own object: changed in place, not copied (`more`,
 * the claim's answer about the next claim, stays on it unread).
 */
function numericSendAt(row: ClaimedDelivery): ClaimedDelivery {
  if (row.send_at !== null) row.send_at = Number(row.send_at);
  if (row.lane !== null) row.lane = Number(row.lane);
  return row;
}
