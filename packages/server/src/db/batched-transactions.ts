import { CompiledQuery, type Kysely, type Transaction } from "kysely";
import { databaseFailureOf, noteRollbackFailure } from "./database-errors.js";

const SAVEPOINT = CompiledQuery.raw("savepoint parley_unit");
const ROLLBACK_TO = CompiledQuery.raw("rollback to savepoint parley_unit");
const RELEASE = CompiledQuery.raw("release savepoint parley_unit");

/**
 * Group commit. Units of work that queue up while the connection is busy are run together in ONE
 * transaction, each inside its own savepoint, and committed once. On SQLite every write already
 * waits for the single connection, so a queue forms under load anyway; running it as one
 * transaction pays the commit (the WAL append), BEGIN and the connection hand-over once per batch
 * instead of once per unit.
 *
 * Guarantees, per unit of work:
 * - atomic: its writes commit all together or not at all. A unit that throws is rolled back to its
 *   savepoint and its promise rejects with its own error; the other units of the batch still commit.
 * - durable before answer: its promise resolves only after the batch's COMMIT returned, so its rows
 *   are visible to every reader by then.
 * - serial: units run one after another, in the order they were queued, and see the writes of the
 *   units before them, as if each had committed alone in that order (ids follow commit order).
 * - if the batch itself cannot commit (COMMIT fails, or an error aborted the whole transaction so
 *   its savepoint is gone), every unit of the batch that ran rejects, with the first error (the
 *   cause, not the failed ROLLBACK after it): none of them committed. Units that had not started
 *   yet are not run in the broken transaction; they wait for the next batch.
 * - bounded: when a unit fails because the database is unavailable (SQLITE_BUSY once busy_timeout
 *   ran out: another process holds the write lock), the units after it in the batch are not run
 *   and reject with the same error, instead of each waiting out the time-out in turn. The units
 *   before it still commit.
 *
 * A unit must not wait for another unit of work (or for the connection) from inside its callback:
 * it would wait for its own batch. That already deadlocks with one SQLite connection.
 */
export class TransactionBatcher<DB> {
  private readonly queue: Array<Unit<DB>> = [];
  private running = false;

  constructor(
    private readonly db: Kysely<DB>,
    /** Upper bound on units per transaction, so one batch cannot hold the connection for long. */
    private readonly maxBatch = 64,
  ) {}

  run<T>(work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        work,
        resolve: resolve as (value: unknown) => void,
        reject,
        result: undefined,
      });
      if (this.running) return;
      this.running = true;
      // better-sqlite3 answers synchronously, so without a pause each request would run start to
      // commit before the next one is even read. Starting after the poll phase lets every request
      // read in this event-loop turn reach the queue first and share the commit.
      setImmediate(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) await this.runBatch();
    } finally {
      this.running = false;
    }
  }

  private async runBatch(): Promise<void> {
    let batch = undefined as Array<Unit<DB>> | undefined;
    let started = 0;
    let unavailable: unknown = undefined;
    try {
      await this.db.transaction().execute(async (trx) => {
        // Taken once the connection is ours: everything that queued while we waited for it joins.
        batch = this.queue.splice(0, this.maxBatch);
        if (batch.length === 1) {
          // Alone: the transaction itself is the unit's boundary, no savepoint needed.
          started = 1;
          batch[0]!.result = await batch[0]!.work(trx);
          return;
        }
        for (const unit of batch) {
          if (unavailable !== undefined) {
            // The database did not serve the unit before within the bound (a lock held by
            // another process): the next ones would wait as long again, one after another.
            unit.failed = true;
            unit.reject(unavailable);
            continue;
          }
          started++;
          await trx.executeQuery(SAVEPOINT);
          try {
            unit.result = await unit.work(trx);
          } catch (error) {
            unit.failed = true;
            unit.reject(error);
            if (databaseFailureOf(error) === "unavailable") unavailable = error;
            try {
              await trx.executeQuery(ROLLBACK_TO);
            } catch (rollbackError) {
              // The error already ended the transaction (a full disk makes SQLite roll back by
              // itself), so its savepoint is gone: the whole batch fails, with the unit's error,
              // which says why; "no such savepoint" would not.
              noteRollbackFailure(error, rollbackError);
              throw error;
            }
            await trx.executeQuery(RELEASE);
            continue;
          }
          await trx.executeQuery(RELEASE);
        }
      });
    } catch (error) {
      if (batch === undefined) {
        // No connection or no BEGIN: every waiting unit fails as its own transaction would have.
        for (const unit of this.queue.splice(0)) unit.reject(error);
        return;
      }
      // Nothing of this batch committed. Units that ran fail (a lone unit with its own error, as
      // without batching); units that never started go back to the front of the queue, except
      // those already failed for an unavailable database.
      for (const unit of batch.slice(0, started)) unit.reject(error);
      this.queue.unshift(...batch.slice(started).filter((unit) => !unit.failed));
      return;
    }
    for (const unit of batch!) if (!unit.failed) unit.resolve(unit.result);
  }
}

interface Unit<DB> {
  work: (trx: Transaction<DB>) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  result: unknown;
  failed?: boolean;
}
