import type { Transaction } from "kysely";
import type { Database } from "../db/schema.js";
import type { RequestTrace } from "../tracing/request-trace.js";
import type { DeliverableEvent, EventDataMap, EventName } from "./event-catalogue.js";

/**
 * The contract between the unit of work (db/unit-of-work.ts), which owns every write, and the
 * event spine (events/event-spine.ts), which knows how an event is queued and announced. Both
 * import this module; neither imports the other.
 */

/**
 * What a single-statement unit of work puts in the place of a value only its statement knows (the
 * id of the row it inserts) when it describes the event it emits; the spine splits the envelope
 * and the notification payloads around it. Printed the same by JSON.stringify and String().
 */
export const STATEMENT_HOLE = Number.MAX_SAFE_INTEGER;

/** One delivery to one endpoint, outside the subscriptions (the test event, a redelivery). */
export interface SingleDelivery {
  webhookId: number;
  event: DeliverableEvent;
  /** The exact body bytes to send, frozen now. */
  body: string;
  /** When the body's envelope was stamped, so the row and the envelope agree. Default: now. */
  enqueuedAt?: number;
  /** The event id to keep (a redelivery, a recovery). Default: a new one. */
  eventId?: string;
  /** The delivery this one repeats (a redelivery). */
  redeliveryOf?: number;
  /** Copied from the original delivery, for the delivery search. */
  roomId?: number | null;
  messageId?: number | null;
  /**
   * The trace its attempts continue: a redelivery or recovery keeps the original's. Default: the
   * trace of the request whose unit of work queues it.
   */
  trace?: RequestTrace | null;
  /**
   * Outside the endpoint's ordered lanes (the ownership challenge: it must go while the lanes
   * wait for it). Default: a test, redelivery or recovery joins the end of its lane.
   */
  outsideLanes?: boolean;
}

/** An event whose transaction committed. */
export interface CommittedEvent {
  event: EventName;
  data: unknown;
}

/** The PostgreSQL CTEs that emit an event inside one statement (see `Outbox.emitInStatement`). */
export interface StatementEmit {
  /** CTEs, to follow the statement's own (`, ` + sql); they read the CTE named "emitting". */
  sql: string;
  /** Their parameters, numbered from the `firstParam` given. */
  values: unknown[];
  /** An expression over the CTEs: how many deliveries were queued. */
  queued: string;
  /** An expression to select in the answer: it makes the notification CTEs run. */
  notified: string;
}

/**
 * What the unit of work needs from the event spine: the outbox statements, run inside the
 * transaction. Who hears an event is the catalogue's rule (EVENT_AUDIENCE), applied here: callers
 * only name the event and its data.
 */
export interface Outbox {
  /** Queues `event` for every subscribed, enabled endpoint of its audience. Answers how many. */
  fanOut<E extends EventName>(
    trx: Transaction<Database>,
    event: E,
    data: EventDataMap[E],
    trace: RequestTrace | undefined,
  ): Promise<number>;
  /** Queues one delivery to one endpoint; answers its id. */
  enqueue(
    trx: Transaction<Database>,
    delivery: SingleDelivery,
    trace: RequestTrace | undefined,
  ): Promise<number>;
  /**
   * The same fan-out and in-transaction notifications as CTEs of one PostgreSQL statement, for
   * each row of the statement's CTE named "emitting" (its column "id" is the value `data` holds as
   * STATEMENT_HOLE).
   */
  emitInStatement<E extends EventName>(
    event: E,
    data: EventDataMap[E],
    firstParam: number,
    trace: RequestTrace | undefined,
  ): StatementEmit;
  /**
   * The same for a statement that runs several units at once (one event's data and trace per
   * unit).
   */
  emitInBatchStatement<E extends EventName>(
    event: E,
    datas: ReadonlyArray<EventDataMap[E]>,
    firstParam: number,
    traces: ReadonlyArray<RequestTrace | undefined>,
  ): StatementEmit;
}

/**
 * After a commit: `events` were emitted and `queued` deliveries became due. The spine hands this
 * function to the unit of work alone (EventSpine.create): only a committed unit announces.
 */
export type Announce = (events: ReadonlyArray<CommittedEvent>, queued: number) => void;
