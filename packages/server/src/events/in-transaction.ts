import type { Kysely, Transaction } from "kysely";
import type { Database } from "../db/schema.js";
import type { EventDataMap, EventName } from "./event-catalogue.js";
import type { EventSpine } from "./event-spine.js";

/** A unit of work: the transaction, plus `emit` that queues an event inside it. */
export interface Tx {
  readonly db: Transaction<Database>;
  emit<E extends EventName>(event: E, data: EventDataMap[E]): Promise<void>;
}

/**
 * Runs `work` in one transaction. Events emitted inside commit with the domain rows or not at all;
 * the dispatcher is woken only after the commit succeeded.
 */
export async function inTransaction<T>(
  deps: { db: Kysely<Database>; spine: EventSpine },
  work: (tx: Tx) => Promise<T>,
): Promise<T> {
  let queued = 0;
  const emitted: Array<{ event: EventName; data: unknown }> = [];
  const result = await deps.db.transaction().execute(async (trx) =>
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
