import type { Kysely, Transaction } from "kysely";
import type { DeliverableEvent, EventDataMap, EventName } from "../events/event-catalogue.js";
import { TransactionBatcher } from "./batched-transactions.js";
import type { DialectName } from "./dialect.js";
import type { DatabaseConnection } from "./open-database.js";
import type { Database } from "./schema.js";

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
  /** Copied from the original delivery, for the delivery search. */
  roomId?: number | null;
  messageId?: number | null;
}

/**
 * A unit of work: the transaction every domain write goes through. Repositories take `tx.db`;
 * events emitted here are queued in the same transaction (the transactional outbox) and announced
 * only after it committed.
 */
export interface Tx {
  readonly db: Transaction<Database>;
  /** Fans `event` out to every enabled endpoint subscribed to it, in this transaction. */
  emit<E extends EventName>(event: E, data: EventDataMap[E]): Promise<void>;
  /** Queues one delivery to one endpoint in this transaction; answers its id. */
  enqueue(delivery: SingleDelivery): Promise<number>;
  /**
   * Says that deliveries already queued became due in this transaction (an endpoint was enabled
   * again): after the commit, every process's dispatcher is woken as for new deliveries.
   */
  deliveriesDue(): void;
}

/**
 * What the unit of work needs from the event spine: the outbox statements, run inside the
 * transaction, and the announcement of what committed. The spine implements it.
 */
export interface Outbox {
  fanOut<E extends EventName>(
    trx: Transaction<Database>,
    event: E,
    data: EventDataMap[E],
  ): Promise<number>;
  enqueue(trx: Transaction<Database>, delivery: SingleDelivery): Promise<number>;
  /** After a commit: `events` were emitted and `queued` deliveries became due. */
  committed(events: ReadonlyArray<CommittedEvent>, queued: number): void;
}

export interface CommittedEvent {
  event: EventName;
  data: unknown;
}

/** The database as the domain uses it: the connection plus the one way to write. */
export interface ParleyDatabase extends DatabaseConnection {
  /**
   * Runs `work` in one transaction. Its writes and the deliveries its events queue commit
   * together or not at all; after the commit (never before, never on rollback) the dispatchers of
   * this process are woken and, on PostgreSQL, every other process through NOTIFY.
   *
   * On SQLite, units that arrive together share one transaction, each inside a savepoint of its
   * own, so one commit serves many (TransactionBatcher): each unit is still all or nothing, and
   * its promise settles after the shared commit. A unit must not start another unit of work from
   * inside its callback (it would wait for its own batch).
   */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
}

/** Binds a connection to the outbox: the database every service writes through. */
export function withUnitOfWork(connection: DatabaseConnection, outbox: Outbox): ParleyDatabase {
  const run = transactionRunner(connection.db, connection.dialect);
  return {
    db: connection.db,
    dialect: connection.dialect,
    pgConfig: connection.pgConfig,
    close: () => connection.close(),
    async transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
      let queued = 0;
      const emitted: CommittedEvent[] = [];
      const result = await run((trx) =>
        work({
          db: trx,
          async emit(event, data) {
            queued += await outbox.fanOut(trx, event, data);
            emitted.push({ event, data });
          },
          async enqueue(delivery) {
            const id = await outbox.enqueue(trx, delivery);
            queued += 1;
            return id;
          },
          deliveriesDue() {
            queued += 1;
          },
        }),
      );
      outbox.committed(emitted, queued);
      return result;
    },
  };
}

/**
 * SQLite has one connection, so concurrent writes queue for it anyway: group-commit them.
 * PostgreSQL keeps one transaction per unit on its pool of connections.
 */
function transactionRunner(
  db: Kysely<Database>,
  dialect: DialectName,
): <T>(work: (trx: Transaction<Database>) => Promise<T>) => Promise<T> {
  if (dialect === "postgres") return (work) => db.transaction().execute(work);
  const batcher = new TransactionBatcher(db);
  return (work) => batcher.run(work);
}
