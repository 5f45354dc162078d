import type { Kysely, Transaction } from "kysely";
import { TransactionBatcher } from "../db/batched-transactions.js";
import type { Database } from "../db/schema.js";
import type { EventDataMap, EventName } from "./event-catalogue.js";
import type { EventSpine } from "./event-spine.js";

/** A unit of work: the transaction, plus `emit` that queues an event inside it. */
export interface Tx {
  readonly db: Transaction<Database>;
  emit<E extends EventName>(event: E, data: EventDataMap[E]): Promise<void>;
}

// SQLite has one connection, so concurrent writes queue for it anyway: group-commit them (one
// batcher per database). PostgreSQL keeps one transaction per unit on its pool of connections.
const batchers = new WeakMap<Kysely<Database>, TransactionBatcher<Database>>();

function runTransaction<T>(
  deps: { db: Kysely<Database>; spine: EventSpine },
  work: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  if (deps.spine.dialect !== "sqlite") return deps.db.transaction().execute(work);
  let batcher = batchers.get(deps.db);
  if (!batcher) batchers.set(deps.db, (batcher = new TransactionBatcher(deps.db)));
  return batcher.run(work);
}

/**
 * Runs `work` in one transaction. Events emitted inside commit with the domain rows or not at all;
 * the dispatcher is woken only after the commit succeeded. On SQLite, units arriving together
 * share a transaction (see TransactionBatcher), each still all-or-nothing on its own.
 */
export async function inTransaction<T>(
  deps: { db: Kysely<Database>; spine: EventSpine },
  work: (tx: Tx) => Promise<T>,
): Promise<T> {
  let queued = 0;
  const emitted: Array<{ event: EventName; data: unknown }> = [];
  const result = await runTransaction(deps, (trx) =>
    work({
      db: trx,
      async emit(event, data) {
        queued += await deps.spine.fanOut(trx, event, data);
        emitted.push({ event, data });
      },
    }),
  );
  deps.spine.afterCommit(emitted, queued);
  return result;
}
