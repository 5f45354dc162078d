import { CompiledQuery, type Transaction } from "kysely";
import { sqlSpelling, type DialectName, type SqlSpelling } from "../../../db/dialect.js";
import type { Database } from "../../../db/schema.js";
import type { EventAudience } from "../../../events/event-catalogue.js";
import { laneOf } from "./lane-of.js";

/**
 * The queue verb of the fan-out: ONE `INSERT ... SELECT` that queues a delivery of an event for
 * every endpoint that hears it, each body built around the endpoint's id (see envelopeAround) and
 * each event id made of the event's prefix and the endpoint's id (see event-id.ts). It runs in
 * every write that emits (`tx.emit`, and as a CTE of the post statement on PostgreSQL), so its
 * text is fixed: nothing to build per call, one round trip.
 *
 * Which endpoints hear an event is `subscribedEndpoints`, written once here for both forms and
 * both databases:
 * - enabled;
 * - subscribed: `events` holds the endpoint's JSON array of event names, so the quoted name occurs
 *   in it exactly when the endpoint names the event; an endpoint with wildcards also has
 *   `event_prefixes`, the JSON array of their prefixes, searched only for such endpoints;
 * - its room filter (`,3,17,`) holds `,<roomId>,` when the event carries a roomId (events without
 *   one pass);
 * - the event's audience (event-catalogue.ts EVENT_AUDIENCE): for `subscribers-outside-dms`, the
 *   event's room is not a direct message (one promoted to a room is a room). The look-up is by primary key and does not
 *   depend on the endpoint, so it runs once per statement (per emitting row in a combined one).
 */

/** The values the fan-out reads, each spelled as SQL by the form that runs it. */
export interface FanOutInputs {
  /** The event's name. */
  event: string;
  /** The event's name as a JSON string (`"MESSAGE_CREATED"`), as `events` holds it. */
  quoted: string;
  /** `,<roomId>,`, or null for an event without a room. */
  roomKey: string;
  roomId: string;
  messageId: string;
  /** The envelope's time, and the row's. */
  at: string;
  /** The event id's prefix, followed by the endpoint id. */
  eventIdPrefix: string;
  /** The trace of the request that caused the event (its traceparent and tracestate), or null. */
  traceParent: string;
  traceState: string;
}

export const FAN_OUT_COLUMNS = `"webhook_id", "event", "body", "status", "attempts", "next_attempt_at",
  "locked_until", "locked_by", "last_response_status", "created_at", "updated_at", "event_id",
  "room_id", "message_id", "lane", "trace_parent", "trace_state"`;

/**
 * Whether the endpoint `w` is subscribed to the event and its room filter lets it through, enabled
 * or not: the subscription half of `subscribedEndpoints`, which replay-missing-events.ts applies
 * to kept events as they are matched against an endpoint's subscription now.
 */
export function hearsEvent(
  spelling: SqlSpelling,
  input: Pick<FanOutInputs, "event" | "quoted" | "roomKey">,
): string {
  return `(${spelling.contains(`w."events"`, input.quoted)} or (w."event_prefixes" is not null and exists (
      select 1 from ${spelling.jsonStrings(`w."event_prefixes"`, "p")}
      where substr(${input.event}, 1, length(p."value")) = p."value")))
    and (w."room_filter" is null or ${input.roomKey} is null or ${spelling.contains(`w."room_filter"`, input.roomKey)})`;
}

/** The endpoints (`w`, a row of "webhooks") that hear the event: the rule, written once. */
export function subscribedEndpoints(
  spelling: SqlSpelling,
  input: Pick<FanOutInputs, "event" | "quoted" | "roomKey" | "roomId">,
  audience: EventAudience["outbound"],
): string {
  const predicate = `w."enabled" = 1
    and ${hearsEvent(spelling, input)}`;
  if (audience === "subscribers") return predicate;
  return `${predicate}
    and not exists (select 1 from "rooms" r where r."id" = ${input.roomId} and r."kind" = 'dm')`;
}

/**
 * The fan-out's `INSERT ... SELECT` from `from` (which names "webhooks" as `w`), each body being
 * the expression `body`.
 */
export function queueDeliveriesSql(
  spelling: SqlSpelling,
  from: string,
  body: string,
  input: FanOutInputs,
  audience: EventAudience["outbound"],
): string {
  return `insert into "webhook_deliveries" (${FAN_OUT_COLUMNS})
  select w."id", ${input.event}, ${body}, 'PENDING', 0, ${input.at}, null, null, null, ${input.at}, ${input.at},
    ${input.eventIdPrefix} || ${spelling.zeroPadded(`w."id"`, 10)}, ${input.roomId}, ${input.messageId},
    ${laneOf(`w."ordering"`, input.roomId)},
    ${input.traceParent}, ${input.traceState}
  from ${from}
  where ${subscribedEndpoints(spelling, input, audience)}`;
}

/** The values of one fan-out in a transaction. */
export interface FanOutValues {
  event: string;
  /** The envelope up to the endpoint's id, and after it (see envelopeAround). */
  prefix: string;
  suffix: string;
  at: number;
  eventIdPrefix: string;
  roomId: number | null;
  messageId: number | null;
  traceParent: string | null;
  traceState: string | null;
}

type Value = keyof FanOutValues | "quoted" | "roomKey";
const TYPES: Record<Value, string> = {
  event: "varchar",
  prefix: "text",
  suffix: "text",
  at: "bigint",
  eventIdPrefix: "text",
  roomId: "bigint",
  messageId: "bigint",
  quoted: "text",
  roomKey: "text",
  traceParent: "text",
  traceState: "text",
};

interface Prepared {
  text: string;
  /** Which value each parameter is, in order. */
  order: Value[];
}

const prepared = new Map<string, Prepared>();

/** A value's place in a text written with markers, replaced by parameters (see `parameterized`). */
const marker = (name: Value) => `⟪${name}⟫`;

const MARKED: FanOutInputs = {
  event: marker("event"),
  quoted: marker("quoted"),
  roomKey: marker("roomKey"),
  roomId: marker("roomId"),
  messageId: marker("messageId"),
  at: marker("at"),
  eventIdPrefix: marker("eventIdPrefix"),
  traceParent: marker("traceParent"),
  traceState: marker("traceState"),
};

/** The fan-out's text for a dialect and an audience, built once. */
export function preparedFor(dialect: DialectName, audience: EventAudience["outbound"]): Prepared {
  const key = `${dialect}/${audience}`;
  let found = prepared.get(key);
  if (found) return found;
  const spelling = sqlSpelling(dialect);
  const written = queueDeliveriesSql(
    spelling,
    `"webhooks" w`,
    `${marker("prefix")} || ${spelling.text(`w."id"`)} || ${marker("suffix")}`,
    MARKED,
    audience,
  );
  found = parameterized(spelling, written);
  prepared.set(key, found);
  return found;
}

/**
 * A text written with a marker per value, each marker replaced, in the order of the text, by its
 * parameter: SQLite's are positional (one per occurrence), PostgreSQL's numbered (one per value).
 */
function parameterized(spelling: SqlSpelling, written: string): Prepared {
  const order: Value[] = [];
  const numbered = new Map<Value, string>();
  const text = written.replace(/⟪(\w+)⟫/g, (_, name: Value) => {
    const again = spelling.reusesParameters ? numbered.get(name) : undefined;
    if (again !== undefined) return again;
    order.push(name);
    const placeholder = spelling.parameter(order.length, TYPES[name]);
    numbered.set(name, placeholder);
    return placeholder;
  });
  return { text, order };
}

/**
 * Keeps the event itself in `webhook_events` (migration 024), whoever hears it, so that an
 * endpoint can later be sent what it missed (replay-missing-events.ts): the event, its id prefix,
 * the envelope around the endpoint id, its room and message, time and trace. Only events
 * integrations may hear are kept: those of the audience `subscribers-outside-dms` only when their
 * room is not a direct message (the fan-out's own rule). Written in the same transaction or
 * statement as the deliveries, from `from` (the emitting rows of a statement; none otherwise).
 */
export function storeEventSql(
  input: Pick<
    FanOutInputs,
    "event" | "eventIdPrefix" | "roomId" | "messageId" | "at" | "traceParent" | "traceState"
  > & { prefix: string; suffix: string },
  audience: EventAudience["outbound"],
  from?: string,
): string {
  const inDm = `exists (select 1 from "rooms" r where r."id" = ${input.roomId} and r."kind" = 'dm')`;
  return `insert into "webhook_events" ("event", "event_id_prefix", "envelope_prefix",
    "envelope_suffix", "room_id", "message_id", "created_at", "trace_parent", "trace_state")
  select ${input.event}, ${input.eventIdPrefix}, ${input.prefix}, ${input.suffix}, ${input.roomId},
    ${input.messageId}, ${input.at}, ${input.traceParent}, ${input.traceState}${
      from === undefined
        ? ""
        : `
  from ${from}`
    }${
      audience === "subscribers"
        ? ""
        : `
  where not ${inDm}`
    }`;
}

const preparedEvents = new Map<string, Prepared>();

/** Keeps the event (see storeEventSql) in the transaction `trx`. */
export async function storeEvent(
  trx: Transaction<Database>,
  dialect: DialectName,
  audience: EventAudience["outbound"],
  values: FanOutValues,
): Promise<void> {
  const key = `${dialect}/${audience}`;
  let found = preparedEvents.get(key);
  if (!found) {
    found = parameterized(
      sqlSpelling(dialect),
      storeEventSql({ ...MARKED, prefix: marker("prefix"), suffix: marker("suffix") }, audience),
    );
    preparedEvents.set(key, found);
  }
  const all: Record<Value, unknown> = { ...values, quoted: null, roomKey: null };
  const { text, order } = found;
  await trx.executeQuery(
    CompiledQuery.raw(
      text,
      order.map((name) => all[name]),
    ),
  );
}

/**
 * Queues `values.event` for every endpoint that hears it (see `subscribedEndpoints`), in the
 * transaction `trx`. Answers how many deliveries it queued.
 */
export async function queueDeliveries(
  trx: Transaction<Database>,
  dialect: DialectName,
  audience: EventAudience["outbound"],
  values: FanOutValues,
): Promise<number> {
  const { text, order } = preparedFor(dialect, audience);
  const roomKey = values.roomId === null ? null : `,${values.roomId},`;
  const all: Record<Value, unknown> = {
    ...values,
    quoted: JSON.stringify(values.event),
    roomKey,
  };
  const result = await trx.executeQuery(
    CompiledQuery.raw(
      text,
      order.map((name) => all[name]),
    ),
  );
  return Number(result.numAffectedRows ?? 0);
}
