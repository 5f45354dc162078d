import { CompiledQuery, type Kysely, type Transaction } from "kysely";
import type { DialectName } from "../db/dialect.js";
import type { Database } from "../db/schema.js";
import { envelopeAround } from "./build-envelope.js";
import type { DeliverableEvent, EventDataMap, EventName } from "./event-catalogue.js";

/** PostgreSQL channel that wakes idle dispatchers in every process when deliveries are queued. */
export const DELIVERIES_CHANNEL = "parley_deliveries";

const NOTIFY = CompiledQuery.raw(`select pg_notify('${DELIVERIES_CHANNEL}', '')`);

// Fan-out runs in every write that emits: ONE statement finds the enabled endpoints subscribed to
// the event and inserts a delivery for each, its body built around the endpoint's id (see
// envelopeAround). `events` holds the endpoint's JSON array of event names, so the quoted name
// occurs in it exactly when the endpoint is subscribed. Plain SQL per dialect, fixed text: nothing
// to build per call, and one round trip on PostgreSQL instead of a select and an insert.
const FAN_OUT_COLUMNS = `"webhook_id", "event", "body", "status", "attempts", "next_attempt_at",
  "locked_until", "locked_by", "last_response_status", "created_at", "updated_at"`;
const FAN_OUT_SQL: Record<DialectName, string> = {
  sqlite: `insert into "webhook_deliveries" (${FAN_OUT_COLUMNS})
    select "id", ?, ? || "id" || ?, 'PENDING', 0, ?, null, null, null, ?, ?
    from "webhooks" where "enabled" = 1 and instr("events", ?) > 0`,
  postgres: `insert into "webhook_deliveries" (${FAN_OUT_COLUMNS})
    select "id", $1::varchar, $2::text || "id"::text || $3::text, 'PENDING', 0, $4::bigint, null,
      null, null, $5::bigint, $6::bigint
    from "webhooks" where "enabled" = 1 and strpos("events", $7::text) > 0`,
};

export interface EventSpineOptions {
  dialect: DialectName;
  /**
   * On PostgreSQL, where the spine sends its NOTIFY after a commit that queued deliveries. Without
   * it only this process's dispatcher is woken (others find the rows on their next sweep).
   */
  db?: Kysely<Database>;
  /** False in the Community edition: events are not fanned out to outbound endpoints. */
  outboundEnabled: boolean;
  now?: () => number;
}

/**
 * The event spine (transactional outbox). `emit` runs inside the caller's transaction and inserts
 * one PENDING delivery per enabled endpoint subscribed to the event, with its body frozen; the
 * rows commit or roll back with the chat write. After commit, listeners (the dispatcher) are woken;
 * on PostgreSQL a NOTIFY wakes other processes too.
 *
 * The NOTIFY is sent after the commit, on its own, and coalesced: one NOTIFY in flight at a time,
 * plus one more if further commits queued deliveries meanwhile. Sent inside each transaction, it
 * would make every commit take PostgreSQL's global notify lock (held through the commit to keep
 * notifications in commit order), serializing the commits of all notifying writers.
 * A NOTIFY is only a wake-up: a lost one (a crash right after the commit, a dropped connection)
 * delays the other processes until their periodic sweep, and the rows are already durable.
 */
export class EventSpine {
  readonly dialect: DialectName;
  readonly outboundEnabled: boolean;
  readonly now: () => number;
  private readonly listeners = new Set<() => void>();
  private readonly emittedListeners = new Set<(event: EventName, data: unknown) => void>();
  private readonly notifyDb: Kysely<Database> | undefined;
  private notifying = false;
  private notifyAgain = false;

  constructor(options: EventSpineOptions) {
    this.dialect = options.dialect;
    this.notifyDb = options.dialect === "postgres" ? options.db : undefined;
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
    const now = this.now();
    const { prefix, suffix } = envelopeAround(event, now, data);
    const result = await trx.executeQuery(
      CompiledQuery.raw(FAN_OUT_SQL[this.dialect], [
        event,
        prefix,
        suffix,
        now,
        now,
        now,
        JSON.stringify(event),
      ]),
    );
    return Number(result.numAffectedRows ?? 0);
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
    return row.id;
  }

  /**
   * Tells every process's dispatcher that deliveries may be due (an endpoint was re-enabled):
   * locally at once, and on PostgreSQL through NOTIFY to the other processes.
   */
  announceDue(): void {
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

  /**
   * Called after the commit of a transaction that emitted `events` and queued `queued` deliveries
   * (by inTransaction(), and by the services that queue a single delivery).
   */
  afterCommit(events: ReadonlyArray<{ event: EventName; data: unknown }>, queued: number): void {
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
    void (async () => {
      try {
        do {
          this.notifyAgain = false;
          await db.executeQuery(NOTIFY);
        } while (this.notifyAgain);
      } catch {
        // The database is unreachable or closing: the other processes' sweep finds the rows.
      } finally {
        this.notifying = false;
      }
    })();
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
