import { sql, type Kysely } from "kysely";
import type { Database, DeliveryStatus } from "../../../db/schema.js";
import { laneOf } from "../delivery-engine/lane-of.js";
import type { AttemptRow, DeliveryRow, DeliverySummaryRow } from "./webhook-views.js";

/** Queries on `webhook_deliveries` and `webhook_attempts` for the delivery log. */
const SUMMARY_COLUMNS = [
  "id",
  "webhook_id",
  "event",
  "status",
  "attempts",
  "next_attempt_at",
  "last_response_status",
  "created_at",
  "updated_at",
  "event_id",
  "redelivery_of",
] as const;

export interface DeliveryFilter {
  status?: DeliveryStatus | undefined;
  event?: string | undefined;
  /** The last id of the previous page: this page holds older (smaller) ids. */
  beforeId: number | undefined;
  limit: number;
}

/** Newest first, without bodies. Served by the (webhook_id, id) index. Fetches `limit + 1`. */
export async function listDeliveries(
  db: Kysely<Database>,
  webhookId: number,
  filter: DeliveryFilter,
): Promise<DeliverySummaryRow[]> {
  let query = db
    .selectFrom("webhook_deliveries")
    .select(SUMMARY_COLUMNS)
    .where("webhook_id", "=", webhookId)
    .orderBy("id", "desc")
    .limit(filter.limit + 1);
  if (filter.status !== undefined) query = query.where("status", "=", filter.status);
  if (filter.event !== undefined) query = query.where("event", "=", filter.event);
  if (filter.beforeId !== undefined) query = query.where("id", "<", filter.beforeId);
  return query.execute();
}

/** A delivery of that endpoint; undefined when it does not exist or belongs to another one. */
export async function findDelivery(
  db: Kysely<Database>,
  webhookId: number,
  deliveryId: number,
): Promise<DeliveryRow | undefined> {
  return db
    .selectFrom("webhook_deliveries")
    .selectAll()
    .where("id", "=", deliveryId)
    .where("webhook_id", "=", webhookId)
    .executeTakeFirst();
}

/** The deliveries that repeat `deliveryId` (redeliveries, recoveries), oldest first. */
export async function listRedeliveries(
  db: Kysely<Database>,
  deliveryId: number,
  limit: number,
): Promise<Array<Pick<DeliveryRow, "id" | "status" | "created_at">>> {
  return db
    .selectFrom("webhook_deliveries")
    .select(["id", "status", "created_at"])
    .where("redelivery_of", "=", deliveryId)
    .orderBy("id")
    .limit(limit)
    .execute();
}

export async function listAttempts(
  db: Kysely<Database>,
  deliveryId: number,
): Promise<AttemptRow[]> {
  return db
    .selectFrom("webhook_attempts")
    .selectAll()
    .where("delivery_id", "=", deliveryId)
    .orderBy("attempt", "asc")
    .orderBy("id", "asc")
    .execute();
}

export interface DeliverySearch {
  webhookId?: number | undefined;
  status?: DeliveryStatus | undefined;
  event?: string | undefined;
  eventId?: string | undefined;
  roomId?: number | undefined;
  messageId?: number | undefined;
  /** created_at >= since, < until (epoch ms). */
  since?: number | undefined;
  until?: number | undefined;
  beforeId: number | undefined;
  limit: number;
}

/**
 * The delivery log across endpoints, newest first, with each endpoint's name. Every filter narrows
 * a walk of ids downwards; the selective ones have an index of their own to seek through (event
 * id, room, message, endpoint, FAILED/EXHAUSTED status), so a page costs about its own rows
 * (bench/delivery-search.bench.ts measures it at a million deliveries). Fetches `limit + 1`.
 */
export async function searchDeliveries(
  db: Kysely<Database>,
  search: DeliverySearch,
): Promise<Array<DeliverySummaryRow & { webhook_name: string; webhook_enabled: number }>> {
  let query = db
    .selectFrom("webhook_deliveries as d")
    .innerJoin("webhooks as w", "w.id", "d.webhook_id")
    .select(SUMMARY_COLUMNS.map((column) => `d.${column}` as const))
    .select(["w.name as webhook_name", "w.enabled as webhook_enabled"])
    .orderBy("d.id", "desc")
    .limit(search.limit + 1);
  if (search.webhookId !== undefined) query = query.where("d.webhook_id", "=", search.webhookId);
  if (search.status !== undefined) query = query.where("d.status", "=", search.status);
  // Says in the partial indexes' own words that they apply: SQLite does not infer it from
  // status = 'FAILED' (measured at a million rows: 67 ms -> under 1 ms for endpoint + status).
  if (search.status === "FAILED" || search.status === "EXHAUSTED")
    query = query.where(sql<boolean>`d.status IN ('FAILED', 'EXHAUSTED')`);
  if (search.event !== undefined) query = query.where("d.event", "=", search.event);
  if (search.eventId !== undefined) query = query.where("d.event_id", "=", search.eventId);
  if (search.roomId !== undefined) query = query.where("d.room_id", "=", search.roomId);
  if (search.messageId !== undefined) query = query.where("d.message_id", "=", search.messageId);
  if (search.since !== undefined) query = query.where("d.created_at", ">=", search.since);
  if (search.until !== undefined) query = query.where("d.created_at", "<", search.until);
  if (search.beforeId !== undefined) query = query.where("d.id", "<", search.beforeId);
  return query.execute();
}

/** Most deliveries one recover call queues. */
export const RECOVER_MAX = 10_000;

export interface RecoverFilter {
  statuses: readonly DeliveryStatus[];
  since: number;
  until: number;
}

/**
 * What a recovery copies: for each event of the endpoint first queued in [since, until) whose
 * latest delivery (the original, or the newest copy a redelivery or an earlier recovery made) is
 * in a state of `statuses`, that delivery; at most RECOVER_MAX, in id order. So an event is
 * queued once however often the range is recovered: its copies are never matched as events of
 * their own, and while a copy is pending the event is not queued again. An event that reached
 * the endpoint once (any of its deliveries there SUCCESS) is never recovered, even when a later
 * redelivery of it failed: recovery must not send a receiver an event it already has.
 *
 * Copies share their event's id: `event_id` (indexed) finds an event's deliveries to the endpoint.
 * A row without one (inserted by hand) is an event of its own.
 */
function recoverable(db: Kysely<Database>, webhookId: number, filter: RecoverFilter) {
  // When the event was first queued to the endpoint: the time its original was created.
  const firstQueued = sql<number>`COALESCE((
    SELECT MIN(f.created_at) FROM webhook_deliveries f
    WHERE f.webhook_id = d.webhook_id AND f.event_id = d.event_id
  ), d.created_at)`;
  return (
    db
      .selectFrom("webhook_deliveries as d")
      .where("d.webhook_id", "=", webhookId)
      .where("d.status", "in", [...filter.statuses])
      // A copy is created after its original: this narrows the walk before the lookups below.
      .where("d.created_at", ">=", filter.since)
      // The event's latest delivery to the endpoint: no later copy.
      .where(
        sql<boolean>`NOT EXISTS (
          SELECT 1 FROM webhook_deliveries l
          WHERE l.webhook_id = d.webhook_id AND l.event_id = d.event_id AND l.id > d.id
        )`,
      )
      // The event reached the endpoint already (by the original, a redelivery or a recovery).
      .where(
        sql<boolean>`NOT EXISTS (
          SELECT 1 FROM webhook_deliveries s
          WHERE s.webhook_id = d.webhook_id AND s.event_id = d.event_id AND s.status = 'SUCCESS'
        )`,
      )
      .where(sql<boolean>`${firstQueued} >= ${filter.since}`)
      .where(sql<boolean>`${firstQueued} < ${filter.until}`)
      .orderBy("d.id")
      .limit(RECOVER_MAX)
  );
}

/** How many deliveries recoverDeliveries would queue now (at most RECOVER_MAX). */
export async function countRecoverable(
  db: Kysely<Database>,
  webhookId: number,
  filter: RecoverFilter,
): Promise<number> {
  const row = await db
    .selectFrom(recoverable(db, webhookId, filter).select("d.id").as("r"))
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Recovery as one queue verb: a copy of each delivery `recoverable` picks (same body, same event
 * id), PENDING and due now, in ONE `INSERT ... SELECT` so a large recovery is a single statement
 * in the caller's transaction. The originals stay as they are (their log is history); each copy
 * keeps its original's trace. Answers how many were queued.
 */
export async function recoverDeliveries(
  db: Kysely<Database>,
  webhookId: number,
  filter: RecoverFilter,
  now: number,
): Promise<number> {
  const result = await db
    .insertInto("webhook_deliveries")
    .columns([
      "webhook_id",
      "event",
      "body",
      "status",
      "attempts",
      "next_attempt_at",
      "locked_until",
      "locked_by",
      "last_response_status",
      "created_at",
      "updated_at",
      "event_id",
      "room_id",
      "message_id",
      "lane",
      "trace_parent",
      "trace_state",
      "redelivery_of",
    ])
    .expression(
      recoverable(db, webhookId, filter).select([
        "d.webhook_id",
        "d.event",
        "d.body",
        sql.lit("PENDING").as("status"),
        sql.lit(0).as("attempts"),
        // Typed, or PostgreSQL reads the parameters and NULLs of a SELECT list as text.
        sql<number>`CAST(${now} AS bigint)`.as("next_attempt_at"),
        sql<null>`CAST(NULL AS bigint)`.as("locked_until"),
        sql<null>`CAST(NULL AS varchar(100))`.as("locked_by"),
        sql<null>`CAST(NULL AS integer)`.as("last_response_status"),
        sql<number>`CAST(${now} AS bigint)`.as("created_at"),
        sql<number>`CAST(${now} AS bigint)`.as("updated_at"),
        "d.event_id",
        "d.room_id",
        "d.message_id",
        // Each copy joins the end of its lane, in the order of the originals (ids ascending).
        sql<number | null>`(select ${sql.raw(laneOf(`w."ordering"`, `d."room_id"`))}
          from "webhooks" w where w."id" = d."webhook_id")`.as("lane"),
        // A recovery continues the trace of the event it sends again.
        "d.trace_parent",
        "d.trace_state",
        // Linked both ways: the copy names the delivery it repeats.
        "d.id as redelivery_of",
      ]),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0);
}

/** The endpoint a delivery belongs to; undefined when there is no such delivery. */
export async function findDeliveryWebhookId(
  db: Kysely<Database>,
  deliveryId: number,
): Promise<number | undefined> {
  const row = await db
    .selectFrom("webhook_deliveries")
    .select("webhook_id")
    .where("id", "=", deliveryId)
    .executeTakeFirst();
  return row?.webhook_id;
}

/**
 * The first delivery of an event (its id is unique per event and endpoint; every later delivery of
 * it, a redelivery or a recovery, carries the same bytes). Served by the event_id index.
 */
export async function findEventFirstDelivery(
  db: Kysely<Database>,
  eventId: string,
): Promise<{ webhookId: number; deliveryId: number } | undefined> {
  const row = await db
    .selectFrom("webhook_deliveries")
    .select(["id", "webhook_id"])
    .where("event_id", "=", eventId)
    .orderBy("id", "asc")
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : { webhookId: row.webhook_id, deliveryId: row.id };
}
