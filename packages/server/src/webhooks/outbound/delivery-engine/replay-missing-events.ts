import { sql, type Kysely, type RawBuilder } from "kysely";
import { sqlSpelling, type DialectName } from "../../../db/dialect.js";
import type { Database } from "../../../db/schema.js";
import { laneOf } from "./lane-of.js";
import { FAN_OUT_COLUMNS, hearsEvent } from "./queue-deliveries.js";

/** Most deliveries one replay queues (call again with a later `since` for more). */
export const REPLAY_MAX = 10_000;

export interface ReplayRange {
  /** created_at >= since, < until (epoch ms) of the kept event. */
  since: number;
  until: number;
}

/**
 * The events an endpoint missed, as a FROM and WHERE over the kept events `ev` (webhook_events,
 * written by the fan-out) and the endpoint `w`: in the range, heard by the endpoint's subscription
 * as it is now (its events and room filter: queue-deliveries.ts `hearsEvent`, enabled or not),
 * and never queued to it: no delivery of it there, under the event id it has (or would have had)
 * there, its prefix + the endpoint id. So what it missed while disabled, filtered out by a room
 * list since changed, or before it was created, and nothing it got (whatever became of that).
 * Oldest first, at most REPLAY_MAX. The walk is by the events' time index; each candidate costs
 * one seek in the deliveries' event id index.
 */
function missed(dialect: DialectName, webhookId: number, range: ReplayRange): RawBuilder<unknown> {
  const spelling = sqlSpelling(dialect);
  const eventId = `ev."event_id_prefix" || ${spelling.zeroPadded(`w."id"`, 10)}`;
  const hears = hearsEvent(spelling, {
    event: `ev."event"`,
    quoted: `('"' || ev."event" || '"')`,
    roomKey: `(',' || ${spelling.text(`ev."room_id"`)} || ',')`,
  });
  return sql`from "webhook_events" ev, "webhooks" w
    where w."id" = ${webhookId}
      and ev."created_at" >= ${range.since} and ev."created_at" < ${range.until}
      and ${sql.raw(hears)}
      and not exists (select 1 from "webhook_deliveries" d
        where d."event_id" = ${sql.raw(eventId)} and d."webhook_id" = w."id")
    order by ev."id"
    limit ${REPLAY_MAX}`;
}

/** How many deliveries replayMissingEvents would queue now (at most REPLAY_MAX). */
export async function countMissingEvents(
  db: Kysely<Database>,
  dialect: DialectName,
  webhookId: number,
  range: ReplayRange,
): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`
    select count(*) as n from (select ev."id" ${missed(dialect, webhookId, range)}) m
  `.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/**
 * Replay as one queue verb: ONE `INSERT ... SELECT` that queues, for each event the endpoint
 * missed (see `missed`), the delivery the fan-out would have queued then: the body built around
 * the endpoint's id from the kept envelope (so its `timestamp` is the event's time), its event id
 * there, its room, message, lane and trace; PENDING and due now, in event order (ids ascending,
 * so an ordered endpoint's lanes take them in that order). Answers how many were queued.
 */
export async function replayMissingEvents(
  db: Kysely<Database>,
  dialect: DialectName,
  webhookId: number,
  range: ReplayRange,
  now: number,
): Promise<number> {
  const spelling = sqlSpelling(dialect);
  const at = sql`CAST(${now} AS bigint)`;
  const result = await sql`
    insert into "webhook_deliveries" (${sql.raw(FAN_OUT_COLUMNS)})
    select w."id", ev."event",
      ev."envelope_prefix" || ${sql.raw(spelling.text(`w."id"`))} || ev."envelope_suffix",
      'PENDING', 0, ${at}, null, null, null, ${at}, ${at},
      ev."event_id_prefix" || ${sql.raw(spelling.zeroPadded(`w."id"`, 10))},
      ev."room_id", ev."message_id", ${sql.raw(laneOf(`w."ordering"`, `ev."room_id"`))},
      ev."trace_parent", ev."trace_state"
    ${missed(dialect, webhookId, range)}
  `.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
