import { sql, type Insertable, type Kysely, type Selectable, type Updateable } from "kysely";
import type { Database, Ordering, WebhooksTable } from "../../../db/schema.js";
import { isoTime } from "../../../events/event-catalogue.js";
import { laneOf } from "../delivery-engine/lane-of.js";
import type { AttemptStats, HeldLane, WebhookRow } from "./webhook-views.js";

/**
 * Queries on `webhooks` for the admin API. Reads never select `secret_ciphertext` nor a private
 * key (but to rotate them): what the admin API cannot load, it cannot leak. Every function takes the database or a transaction.
 */
const PUBLIC_COLUMNS = [
  "id",
  "name",
  "url",
  "events",
  "enabled",
  "created_at",
  "updated_at",
  "signature_scheme",
  "payload_format",
  "trace_context",
  "room_filter",
  "headers_ciphertext",
  "max_per_second",
  "disabled_reason",
  "disabled_at",
  "consecutive_failures",
  "last_success_at",
  "last_failure_at",
  "last_error",
  "circuit",
  "ordering",
  "auth_ciphertext",
  "tls_subject",
  "tls_expires_at",
  "public_key",
  "verification",
  "failing_since",
  "disabled_delivery_id",
  "disabled_attempt",
] as const;

export async function insertWebhook(
  db: Kysely<Database>,
  values: Insertable<WebhooksTable>,
): Promise<WebhookRow> {
  return db
    .insertInto("webhooks")
    .values(values)
    .returning(PUBLIC_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function findWebhook(
  db: Kysely<Database>,
  id: number,
): Promise<WebhookRow | undefined> {
  return db.selectFrom("webhooks").select(PUBLIC_COLUMNS).where("id", "=", id).executeTakeFirst();
}

/** Oldest first; `afterId` is the last id of the previous page. Fetches `limit + 1` for keysetSlice. */
export async function listWebhooks(
  db: Kysely<Database>,
  page: { afterId: number | undefined; limit: number },
): Promise<WebhookRow[]> {
  let query = db
    .selectFrom("webhooks")
    .select(PUBLIC_COLUMNS)
    .orderBy("id", "asc")
    .limit(page.limit + 1);
  if (page.afterId !== undefined) query = query.where("id", ">", page.afterId);
  return query.execute();
}

export async function updateWebhook(
  db: Kysely<Database>,
  id: number,
  changes: Updateable<WebhooksTable>,
): Promise<WebhookRow | undefined> {
  return db
    .updateTable("webhooks")
    .set(changes)
    .where("id", "=", id)
    .returning(PUBLIC_COLUMNS)
    .executeTakeFirst();
}

/**
 * Deletes an endpoint. Its deliveries and their attempts go with it through the foreign keys'
 * ON DELETE CASCADE (SQLite runs with foreign_keys = ON), all in this one statement, so no
 * delivery of a deleted endpoint is ever left queued. Returns false for an unknown id.
 */
export async function deleteWebhook(db: Kysely<Database>, id: number): Promise<boolean> {
  const deleted = await db
    .deleteFrom("webhooks")
    .where("id", "=", id)
    .returning("id")
    .executeTakeFirst();
  return deleted !== undefined;
}

/**
 * Attempts of the last 24 hours of the given endpoints, as a latency histogram per endpoint
 * (latencies are whole milliseconds and cluster, so there are few distinct values): exact
 * percentiles without loading every attempt. Served by (webhook_id, started_at).
 */
export async function attemptStatsSince(
  db: Kysely<Database>,
  webhookIds: readonly number[],
  since: number,
): Promise<Map<number, AttemptStats>> {
  const stats = new Map<number, AttemptStats>();
  if (webhookIds.length === 0) return stats;
  const rows = await db
    .selectFrom("webhook_attempts")
    .select((eb) => [
      "webhook_id",
      "duration_ms",
      eb.fn.countAll<number | string>().as("n"),
      eb.fn
        .sum<number | string>(
          eb
            .case()
            .when(eb.and([eb("response_status", ">=", 200), eb("response_status", "<", 300)]))
            .then(1)
            .else(0)
            .end(),
        )
        .as("ok"),
    ])
    .where("webhook_id", "in", [...webhookIds])
    .where("started_at", ">=", since)
    .groupBy(["webhook_id", "duration_ms"])
    .orderBy("webhook_id")
    .orderBy("duration_ms")
    .execute();
  for (const row of rows) {
    const id = Number(row.webhook_id);
    let entry = stats.get(id);
    if (!entry) stats.set(id, (entry = { attempts: 0, successes: 0, latencies: [] }));
    const n = Number(row.n);
    entry.attempts += n;
    entry.successes += Number(row.ok);
    entry.latencies.push([row.duration_ms, n]);
  }
  return stats;
}

/**
 * The scheme and sealed signing material of an endpoint (for rotation, which keeps the old secret
 * or private key for the overlap).
 */
export async function findSealedSigningKeys(
  db: Kysely<Database>,
  id: number,
): Promise<
  | Pick<
      Selectable<WebhooksTable>,
      "signature_scheme" | "secret_ciphertext" | "signing_key_ciphertext"
    >
  | undefined
> {
  return db
    .selectFrom("webhooks")
    .select(["signature_scheme", "secret_ciphertext", "signing_key_ciphertext"])
    .where("id", "=", id)
    .executeTakeFirst();
}

/** The endpoint's current ownership challenge (null when it never had one); undefined: no endpoint. */
export async function findVerificationChallenge(
  db: Kysely<Database>,
  id: number,
): Promise<{ challenge: string | null } | undefined> {
  const row = await db
    .selectFrom("webhooks")
    .select("verification_challenge")
    .where("id", "=", id)
    .executeTakeFirst();
  return row && { challenge: row.verification_challenge };
}

/** Most held lanes an endpoint shows. */
export const HELD_LANES_SHOWN = 20;

/**
 * The lanes of an ordered endpoint whose head (lowest unfinished id) has failed and waits for
 * its retry, oldest first (at most HELD_LANES_SHOWN): the same skip scan as the claim
 * (claim-deliveries.ts), one seek per lane, through `webhook_deliveries_lane`. `since` is the
 * start of the head's first attempt; `roomId` is null for lane 0 (no room, or "endpoint").
 */
export async function findHeldLanes(db: Kysely<Database>, webhookId: number): Promise<HeldLane[]> {
  const result = await sql<{ lane: number | string; id: number; since: number | string | null }>`
    WITH RECURSIVE lanes(lane) AS (
      SELECT (SELECT min(x.lane) FROM webhook_deliveries x
        WHERE x.webhook_id = ${webhookId} AND x.lane IS NOT NULL AND x.next_attempt_at IS NOT NULL)
      UNION ALL
      SELECT (SELECT min(x.lane) FROM webhook_deliveries x
        WHERE x.webhook_id = ${webhookId} AND x.lane > l.lane
          AND x.lane IS NOT NULL AND x.next_attempt_at IS NOT NULL)
      FROM lanes l
      WHERE l.lane IS NOT NULL
    )
    SELECT l.lane, d.id,
      coalesce((SELECT min(a.started_at) FROM webhook_attempts a WHERE a.delivery_id = d.id),
        d.updated_at) AS since
    FROM lanes l
    JOIN webhook_deliveries d ON d.id = (
      SELECT min(h.id) FROM webhook_deliveries h
      WHERE h.webhook_id = ${webhookId} AND h.lane = l.lane
        AND h.lane IS NOT NULL AND h.next_attempt_at IS NOT NULL)
    WHERE l.lane IS NOT NULL AND d.status = 'FAILED'
    ORDER BY since, d.id
    LIMIT ${HELD_LANES_SHOWN}
  `.execute(db);
  return result.rows.map((row) => ({
    roomId: Number(row.lane) === 0 ? null : Number(row.lane),
    deliveryId: Number(row.id),
    since: isoTime(Number(row.since)),
  }));
}

/**
 * Moves an endpoint's queued deliveries to the lanes of its new ordering (lane-of.ts), or out of
 * lanes for "none". Two statements, each through the claim index its rows are in, so the
 * endpoint's finished deliveries are never read.
 */
export async function relaneQueuedDeliveries(
  db: Kysely<Database>,
  webhookId: number,
  ordering: Ordering,
): Promise<void> {
  // One of three literals, never the caller's text.
  const literal = { none: "'none'", room: "'room'", endpoint: "'endpoint'" }[ordering];
  const lane = sql<number | null>`${sql.raw(laneOf(literal, `"room_id"`))}`;
  for (const inLane of [false, true]) {
    await db
      .updateTable("webhook_deliveries")
      .set({ lane })
      .where("webhook_id", "=", webhookId)
      .where("lane", inLane ? "is not" : "is", null)
      .where("next_attempt_at", "is not", null)
      // The ownership challenge stays out of lanes: they wait for it.
      .where("event", "!=", "WEBHOOK_VERIFICATION")
      .execute();
  }
}

/** Whether an enabled endpoint sends trace context (tracing/trace-gate.ts). */
export async function hasTracedEndpoint(db: Kysely<Database>): Promise<boolean> {
  const row = await db
    .selectFrom("webhooks")
    .select("id")
    .where("trace_context", "=", 1)
    .where("enabled", "=", 1)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
