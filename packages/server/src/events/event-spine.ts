import { CompiledQuery, type Kysely, type Transaction } from "kysely";
import { compiledOnce } from "../db/compiled-query.js";
import type { DialectName } from "../db/dialect.js";
import type { Database } from "../db/schema.js";
import { buildEnvelope } from "./build-envelope.js";
import type { DeliverableEvent, EventDataMap, EventName } from "./event-catalogue.js";

/** PostgreSQL channel that wakes idle dispatchers in every process when deliveries are queued. */
export const DELIVERIES_CHANNEL = "parley_deliveries";

const NOTIFY = CompiledQuery.raw(`select pg_notify('${DELIVERIES_CHANNEL}', '')`);

// Fan-out runs in every write that emits: its two statements are built and compiled once.
const selectEnabledEndpoints = compiledOnce((db) =>
  db.selectFrom("webhooks").select(["id", "events"]).where("enabled", "=", 1),
);
const insertDelivery = compiledOnce<
  unknown,
  { webhookId: number; event: string; body: string; now: number }
>((db, slot) =>
  db
    .insertInto("webhook_deliveries")
    .values(deliveryRow(slot("webhookId"), slot("event"), slot("body"), slot("now"))),
);

/** An endpoint's `events` column parsed once per distinct text, not on every emit. */
const parsedEvents = new Map<string, ReadonlySet<string>>();
function subscribedTo(events: string): ReadonlySet<string> {
  let set = parsedEvents.get(events);
  if (!set) {
    if (parsedEvents.size >= 1000) parsedEvents.clear();
    set = new Set(JSON.parse(events) as string[]);
    parsedEvents.set(events, set);
  }
  return set;
}

export interface EventSpineOptions {
  dialect: DialectName;
  /** False in the Community edition: events are not fanned out to outbound endpoints. */
  outboundEnabled: boolean;
  now?: () => number;
}

/**
 * The event spine (transactional outbox). `emit` runs inside the caller's transaction and inserts
 * one PENDING delivery per enabled endpoint subscribed to the event, with its body frozen; the
 * rows commit or roll back with the chat write. After commit, listeners (the dispatcher) are woken;
 * on PostgreSQL a NOTIFY, delivered only at commit, wakes other processes too.
 */
export class EventSpine {
  readonly dialect: DialectName;
  readonly outboundEnabled: boolean;
  readonly now: () => number;
  private readonly listeners = new Set<() => void>();
  private readonly emittedListeners = new Set<(event: EventName, data: unknown) => void>();

  constructor(options: EventSpineOptions) {
    this.dialect = options.dialect;
    this.outboundEnabled = options.outboundEnabled;
    this.now = options.now ?? Date.now;
  }

  /** Queues deliveries of `event` for every subscribed, enabled endpoint. Returns how many. */
  async fanOut<E extends EventName>(
    trx: Transaction<Database>,
    event: E,
    data: EventDataMap[E],
  ): Promise<number> {
    if (!this.outboundEnabled) return 0;
    const endpoints = (await selectEnabledEndpoints(trx, {})).rows;
    const subscribed = endpoints.filter((endpoint) => subscribedTo(endpoint.events).has(event));
    if (subscribed.length === 0) return 0;
    const now = this.now();
    if (subscribed.length === 1) {
      const webhookId = subscribed[0]!.id;
      const body = buildEnvelope(event, now, webhookId, data);
      await insertDelivery(trx, { webhookId, event, body, now });
    } else {
      await trx
        .insertInto("webhook_deliveries")
        .values(
          subscribed.map((endpoint) =>
            deliveryRow(endpoint.id, event, buildEnvelope(event, now, endpoint.id, data), now),
          ),
        )
        .execute();
    }
    await this.notifyInTransaction(trx);
    return subscribed.length;
  }

  /** Queues one delivery to one endpoint (the test event, a redelivery) regardless of subscriptions. */
  async enqueueOne<E extends DeliverableEvent>(
    trx: Transaction<Database> | Kysely<Database>,
    webhookId: number,
    event: E,
    body: string,
    /** The time the body's envelope was stamped with, so the row and the envelope agree. */
    enqueuedAt: number = this.now(),
  ): Promise<number> {
    const now = enqueuedAt;
    const row = await trx
      .insertInto("webhook_deliveries")
      .values(deliveryRow(webhookId, event, body, now))
      .returning("id")
      .executeTakeFirstOrThrow();
    await this.notifyInTransaction(trx);
    return row.id;
  }

  /**
   * Tells every process's dispatcher that deliveries may be due (an endpoint was re-enabled):
   * locally at once, and on PostgreSQL through NOTIFY to the other processes.
   */
  async announceDue(db: Kysely<Database>): Promise<void> {
    await this.notifyInTransaction(db);
    this.afterCommit([], 1);
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

  /** @internal called by inTransaction() after commit. */
  afterCommit(events: ReadonlyArray<{ event: EventName; data: unknown }>, queued: number): void {
    for (const { event, data } of events)
      for (const listener of this.emittedListeners) listener(event, data);
    if (queued > 0) for (const listener of this.listeners) listener();
  }

  private async notifyInTransaction(trx: Transaction<Database> | Kysely<Database>): Promise<void> {
    if (this.dialect === "postgres") await trx.executeQuery(NOTIFY);
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
