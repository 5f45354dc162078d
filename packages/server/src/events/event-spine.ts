import { CompiledQuery, sql, type Kysely, type Transaction } from "kysely";
import type { RequestTrace } from "../tracing/request-trace.js";
import { isEmbedded, sqlSpelling, type DialectName } from "../db/dialect.js";
import type { Database } from "../db/schema.js";
import {
  queueDeliveries,
  queueDeliveriesSql,
  storeEvent,
  storeEventSql,
} from "../webhooks/outbound/delivery-engine/queue-deliveries.js";
import { laneOf } from "../webhooks/outbound/delivery-engine/lane-of.js";
import { envelopeAround } from "./build-envelope.js";
import { eventIdFor, newEventIdPrefix } from "./event-id.js";
import { EVENT_AUDIENCE, type EventDataMap, type EventName } from "./event-catalogue.js";
import {
  STATEMENT_HOLE,
  type Announce,
  type CommittedEvent,
  type Outbox,
  type SingleDelivery,
  type StatementEmit,
} from "./outbox.js";

/** PostgreSQL channel that wakes idle dispatchers in every process when deliveries are queued. */
export const DELIVERIES_CHANNEL = "parley_deliveries";

// The payload names the sending process, so its own dispatcher (woken already, in process) can
// leave the NOTIFY to the others.
const NOTIFY_SQL = `select pg_notify('${DELIVERIES_CHANNEL}', $1)`;
const NOTIFY_IN_TRANSACTION_SQL = "select pg_notify($1, $2)";

const HOLE_TEXT = String(STATEMENT_HOLE);

/** `text` split around its one occurrence of the hole. */
function splitAtHole(text: string): [string, string] {
  const parts = text.split(HOLE_TEXT);
  if (parts.length !== 2) throw new Error("the event data must hold the statement's hole once");
  return [parts[0]!, parts[1]!];
}

/** data.roomId / data.messageId when the event has them (integers), else null. */
function idField(data: unknown, field: "roomId" | "messageId"): number | null {
  const value = (data as Record<string, unknown>)[field];
  return Number.isSafeInteger(value) ? (value as number) : null;
}

/** A notification sent inside the emitting transaction (PostgreSQL): heard only if it commits. */
export interface InTransactionNotify {
  channel: string;
  payload: string;
}

/**
 * Says what to send inside every transaction that emits `event` (the live stream's NOTIFY on
 * PostgreSQL), or nothing. Declarative, so a single-statement unit of work can send it as part of
 * its statement (see `emitInStatement`).
 */
export type InTransactionHook = (
  event: EventName,
  data: unknown,
) => InTransactionNotify | undefined;

export interface EventSpineOptions {
  dialect: DialectName;
  /**
   * On PostgreSQL, where the spine sends its NOTIFY after a commit that queued deliveries. Without
   * it only this process's dispatcher is woken (others find the rows on their next sweep).
   */
  db?: Kysely<Database>;
  /** False in the Community edition: events are not fanned out to outbound endpoints. */
  outboundEnabled: boolean;
  /** This process, as named in the NOTIFY payload (the dispatcher's `locked_by`). */
  instanceId?: string;
  now?: () => number;
}

/**
 * The event spine (transactional outbox). Services write through a unit of work
 * (`ctx.database.transaction`, db/unit-of-work.ts); its `tx.emit` runs `fanOut` here inside the
 * transaction, inserting one PENDING delivery per enabled endpoint subscribed to the event, with
 * its body frozen, so the rows commit or roll back with the chat write. After the commit the unit
 * of work announces it (the function `create` hands it): listeners (the dispatcher, metrics) are told, and on PostgreSQL a
 * NOTIFY wakes the other processes too.
 *
 * The NOTIFY is sent after the commit, on its own, and coalesced: one NOTIFY in flight at a time,
 * plus one more if further commits queued deliveries meanwhile. Sent inside each transaction, it
 * would make every commit take PostgreSQL's global notify lock (held through the commit to keep
 * notifications in commit order), serializing the commits of all notifying writers.
 * A NOTIFY is only a wake-up: a lost one (a crash right after the commit, a dropped connection)
 * delays the other processes until their periodic sweep, and the rows are already durable.
 */
export class EventSpine implements Outbox {
  private readonly dialect: DialectName;
  readonly outboundEnabled: boolean;
  readonly now: () => number;
  private readonly listeners = new Set<() => void>();
  private readonly emittedListeners = new Set<(event: EventName, data: unknown) => void>();
  private readonly inTransactionHooks = new Set<InTransactionHook>();
  private readonly notifyDb: Kysely<Database> | undefined;
  private readonly notify: CompiledQuery;
  private notifying = false;
  private notifyAgain = false;
  private notifyChain: Promise<void> = Promise.resolve();

  /** A spine, and the announcement of what committed, for the unit of work (withUnitOfWork). */
  static create(options: EventSpineOptions): { spine: EventSpine; announce: Announce } {
    const spine = new EventSpine(options);
    return { spine, announce: (events, queued) => spine.#committed(events, queued) };
  }

  private constructor(options: EventSpineOptions) {
    this.dialect = options.dialect;
    // Other processes share a database server: they hear of a commit by NOTIFY. An embedded
    // database has this process alone.
    this.notifyDb = isEmbedded(options.dialect) ? undefined : options.db;
    this.outboundEnabled = options.outboundEnabled;
    this.now = options.now ?? Date.now;
    this.notify = CompiledQuery.raw(NOTIFY_SQL, [options.instanceId ?? ""]);
  }

  /**
   * Queues deliveries of `event` for every enabled endpoint that hears it (subscribed, and of the
   * event's audience: EVENT_AUDIENCE, applied by queue-deliveries.ts). Returns how many.
   */
  async fanOut<E extends EventName>(
    trx: Transaction<Database>,
    event: E,
    data: EventDataMap[E],
    trace: RequestTrace | undefined,
  ): Promise<number> {
    for (const hook of this.inTransactionHooks) {
      const notification = hook(event, data);
      if (notification)
        await trx.executeQuery(
          CompiledQuery.raw(NOTIFY_IN_TRANSACTION_SQL, [
            notification.channel,
            notification.payload,
          ]),
        );
    }
    if (!this.outboundEnabled) return 0;
    const now = this.now();
    const { prefix, suffix } = envelopeAround(event, now, data);
    const audience = EVENT_AUDIENCE[event].outbound;
    const values = {
      event,
      prefix,
      suffix,
      at: now,
      eventIdPrefix: `evt_${newEventIdPrefix(now)}`,
      roomId: idField(data, "roomId"),
      messageId: idField(data, "messageId"),
      traceParent: trace?.traceParent ?? null,
      traceState: trace?.traceState ?? null,
    };
    await storeEvent(trx, this.dialect, audience, values);
    return queueDeliveries(trx, this.dialect, audience, values);
  }

  /**
   * The fan-out of `event` and its in-transaction notifications as CTEs of a single PostgreSQL
   * statement, for a unit of work that is one statement (db/unit-of-work.ts `statement`): the same
   * rows `fanOut` inserts and the same NOTIFY payloads it sends, for each row of the statement's
   * CTE named "emitting" (its column "id" is the value `data` holds as STATEMENT_HOLE: the id of
   * the row the statement inserts). The text depends only on the event, on which of its values
   * are the hole, and on the hooks, so a statement built around it can be prepared once.
   */
  emitInStatement<E extends EventName>(
    event: E,
    data: EventDataMap[E],
    firstParam: number,
    trace: RequestTrace | undefined,
  ): StatementEmit {
    const values: unknown[] = [];
    const built = this.emitCtes(event, data, trace, `"emitting" e`, (value, type) => {
      values.push(value);
      return `$${firstParam + values.length - 1}::${type}`;
    });
    return { ...built, values };
  }

  /**
   * The same for a statement that runs several units at once (the statement batcher's combined
   * form): `datas[k]` is the event of the unit whose "emitting" row has "ord" k + 1 (columns
   * "ord" and "id"; a unit that emits nothing has no row). Each value becomes an array parameter
   * holding every unit's value, so the text does not depend on how many units there are.
   * Notifications are sent in the order of the emitted ids. Throws when the units' events differ
   * in shape (hooks that apply, values that are the hole): they cannot share one text.
   */
  emitInBatchStatement<E extends EventName>(
    event: E,
    datas: ReadonlyArray<EventDataMap[E]>,
    firstParam: number,
    traces: ReadonlyArray<RequestTrace | undefined>,
  ): StatementEmit {
    let built: Omit<StatementEmit, "values"> | undefined;
    let types: string[] = [];
    let columns: unknown[][] = [];
    for (const [k, data] of datas.entries()) {
      const row: unknown[] = [];
      const rowTypes: string[] = [];
      const rowBuilt = this.emitCtes(
        event,
        data,
        traces[k],
        `"emitting" e join "parley_emit_input" x on x."ord" = e."ord"`,
        (value, type) => {
          row.push(value);
          rowTypes.push(type);
          return `x."p${row.length - 1}"`;
        },
        ` order by e."id"`,
      );
      if (built === undefined) {
        built = rowBuilt;
        types = rowTypes;
        columns = rowTypes.map(() => []);
      } else if (rowBuilt.sql !== built.sql || rowTypes.join() !== types.join()) {
        throw new Error("the events of one combined statement must have the same shape");
      }
      row.forEach((value, k) => columns[k]!.push(value));
    }
    if (built === undefined || built.sql === "") {
      return {
        sql: "",
        values: [],
        queued: built?.queued ?? "0",
        notified: built?.notified ?? "0",
      };
    }
    const arrays = types.map((type, k) => `$${firstParam + k}::${type}[]`).join(", ");
    const names = types.map((_, k) => `"p${k}"`).join(", ");
    return {
      ...built,
      sql: `"parley_emit_input" as (select * from unnest(${arrays}) with ordinality as x(${names}, "ord")),\n${built.sql}`,
      values: columns,
    };
  }

  /**
   * The CTEs of `emitInStatement` and `emitInBatchStatement`: `rows` names the emitting rows (as
   * `e`), `param` turns a value into its place in the text, `order` orders the notifications.
   */
  private emitCtes<E extends EventName>(
    event: E,
    data: EventDataMap[E],
    trace: RequestTrace | undefined,
    rows: string,
    param: (value: unknown, type: string) => string,
    order = "",
  ): Omit<StatementEmit, "values"> {
    const ctes: string[] = [];
    const notified: string[] = [];
    for (const hook of this.inTransactionHooks) {
      const notification = hook(event, data);
      if (!notification) continue;
      const [before, after] = splitAtHole(notification.payload);
      const name = `"parley_notify_${ctes.length}"`;
      ctes.push(
        `${name} as (select pg_notify(${param(notification.channel, "text")}, ${param(before, "text")} || e."id"::text || ${param(after, "text")}) from ${rows}${order})`,
      );
      notified.push(`(select count(*) from ${name})`);
    }
    let queued = "0";
    if (this.outboundEnabled) {
      const now = this.now();
      const { prefix, suffix } = envelopeAround(event, now, data);
      const [dataBefore, dataAfter] = splitAtHole(suffix);
      const idOrHole = (value: number | null) =>
        value === STATEMENT_HOLE ? `e."id"` : param(value, "bigint");
      const roomId = idField(data, "roomId");
      const roomKey =
        roomId === STATEMENT_HOLE
          ? `(',' || e."id"::text || ',')`
          : param(roomId === null ? null : `,${roomId},`, "text");
      const at = param(now, "bigint");
      const envelopePrefix = param(prefix, "text");
      const envelopeSuffix = `${param(dataBefore, "text")} || e."id"::text || ${param(dataAfter, "text")}`;
      const body = `${envelopePrefix} || w."id"::text || ${envelopeSuffix}`;
      const eventIdPrefix = param(`evt_${newEventIdPrefix(now)}`, "text");
      const traceParent = param(trace?.traceParent ?? null, "text");
      const traceState = param(trace?.traceState ?? null, "text");
      const roomIdSql = idOrHole(roomId);
      const messageIdSql = idOrHole(idField(data, "messageId"));
      const eventName = param(event, "varchar");
      ctes.push(
        `"parley_events" as (\n  ${storeEventSql(
          {
            event: eventName,
            eventIdPrefix,
            prefix: envelopePrefix,
            suffix: envelopeSuffix,
            roomId: roomIdSql,
            messageId: messageIdSql,
            at,
            traceParent,
            traceState,
          },
          EVENT_AUDIENCE[event].outbound,
          rows,
        )}\n  returning 1)`,
      );
      const insert = queueDeliveriesSql(
        sqlSpelling("postgres"),
        `${rows} cross join "webhooks" w`,
        body,
        {
          event: eventName,
          quoted: param(JSON.stringify(event), "text"),
          roomKey,
          roomId: roomIdSql,
          messageId: messageIdSql,
          at,
          eventIdPrefix,
          traceParent,
          traceState,
        },
        EVENT_AUDIENCE[event].outbound,
      );
      ctes.push(`"parley_deliveries" as (\n  ${insert}\n  returning 1)`);
      queued = `(select count(*) from "parley_deliveries")`;
    }
    return {
      sql: ctes.join(",\n"),
      queued,
      notified: notified.length === 0 ? "0" : notified.join(" + "),
    };
  }

  /** Queues one delivery to one endpoint (the test event, a redelivery) regardless of subscriptions. */
  async enqueue(
    trx: Transaction<Database>,
    delivery: SingleDelivery,
    trace: RequestTrace | undefined,
  ): Promise<number> {
    const now = delivery.enqueuedAt ?? this.now();
    const row = await trx
      .insertInto("webhook_deliveries")
      .values({
        ...deliveryRow(delivery.webhookId, delivery.event, delivery.body, now),
        // A redelivery or recovery keeps the event id of the delivery it repeats.
        event_id: delivery.eventId ?? eventIdFor(newEventIdPrefix(now), delivery.webhookId),
        room_id: delivery.roomId ?? null,
        message_id: delivery.messageId ?? null,
        redelivery_of: delivery.redeliveryOf ?? null,
        // A test, redelivery or recovery joins the end of its lane (a new, higher id).
        lane: delivery.outsideLanes
          ? null
          : sql<number | null>`(select ${sql.raw(laneOf(`w."ordering"`, `r."room_id"`))}
          from "webhooks" w, (select cast(${delivery.roomId ?? null} as bigint) as "room_id") r
          where w."id" = ${delivery.webhookId})`,
        ...traceColumns(delivery.trace === undefined ? trace : delivery.trace),
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** Registers a wake-up for deliveries queued by this process; returns the unsubscribe function. */
  onDeliveriesQueued(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Observes every committed event (for metrics and tests); called after commit. */
  onEventCommitted(listener: (event: EventName, data: unknown) => void): () => void {
    this.emittedListeners.add(listener);
    return () => this.emittedListeners.delete(listener);
  }

  /**
   * Registers `hook`, asked for every emitted event what to NOTIFY inside the emitting transaction
   * (the live stream on PostgreSQL: the notification must commit, or roll back, with the event).
   * `fanOut` sends it as its own statement; a single-statement unit makes it part of its statement
   * (`emitInStatement`). Returns the unsubscribe function.
   */
  onEmitInTransaction(hook: InTransactionHook): () => void {
    this.inTransactionHooks.add(hook);
    return () => this.inTransactionHooks.delete(hook);
  }

  /**
   * After the commit of a unit of work that emitted `events` and made `queued` deliveries due.
   * Private: `EventSpine.create` hands it to the unit of work alone, so only a committed unit
   * announces (services write through `ctx.database.transaction`).
   */
  #committed(events: ReadonlyArray<CommittedEvent>, queued: number): void {
    for (const { event, data } of events)
      for (const listener of this.emittedListeners) listener(event, data);
    if (queued === 0) return;
    for (const listener of this.listeners) listener();
    this.notifyOthers();
  }

  /** Sends NOTIFY, coalescing the requests that arrive while one is in flight into one more. */
  private notifyOthers(): void {
    const db = this.notifyDb;
    if (!db) return;
    if (this.notifying) {
      this.notifyAgain = true;
      return;
    }
    this.notifying = true;
    this.notifyChain = (async () => {
      try {
        do {
          this.notifyAgain = false;
          await db.executeQuery(this.notify);
        } while (this.notifyAgain);
      } catch {
        // The database is unreachable or closing: the other processes' sweep finds the rows.
      } finally {
        this.notifying = false;
      }
    })();
  }

  /** Resolves once no NOTIFY is being sent or waiting to be (tests: a causal wait, no sleep). */
  notifySettled(): Promise<void> {
    return this.notifyChain;
  }
}

function deliveryRow(webhookId: number, event: string, body: string, now: number) {
  return {
    webhook_id: webhookId,
    event,
    body,
    status: "PENDING" as const,
    attempts: 0,
    next_attempt_at: now,
    locked_until: null,
    locked_by: null,
    last_response_status: null,
    created_at: now,
    updated_at: now,
  };
}

/** The trace columns of a delivery row. */
function traceColumns(trace: RequestTrace | null | undefined): {
  trace_parent: string | null;
  trace_state: string | null;
} {
  return { trace_parent: trace?.traceParent ?? null, trace_state: trace?.traceState ?? null };
}
