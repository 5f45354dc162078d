import type pg from "pg";

/** One statement as PostgreSQL gets it: a named prepared statement (fixed text), fresh values. */
export interface NamedStatement {
  name: string;
  text: string;
  values: unknown[];
}

/**
 * Group commit on PostgreSQL for units of work that are each ONE statement (unit-of-work.ts
 * `statement`). Statements queued while a batch is starting run together in one transaction,
 * one after another on one connection, and commit once: one COMMIT, one WAL flush and, for
 * statements that NOTIFY, one turn of PostgreSQL's notify lock serve the whole batch. A statement
 * queued alone runs on its own, without BEGIN and COMMIT (one round trip).
 *
 * No savepoints: a statement is atomic by itself, and a unit that refuses (a post to a deleted
 * room) writes nothing and reports it in its answer instead of failing. When a statement does
 * fail (a constraint, a lost connection), the transaction is rolled back, that unit rejects with
 * its error, and the others of the batch, none of which committed, are queued again to run in the
 * next batch, so one unit's failure is never another's.
 *
 * Guarantees, per statement: it commits or not at all; its promise resolves after the COMMIT that
 * made it durable returned (with its result rows), or rejects and nothing of it committed, except
 * when COMMIT itself fails, where the outcome is as unknown as for any transaction whose COMMIT
 * failed. Statements of one batch run in queue order and see the writes of those before them.
 */
export class StatementBatcher {
  private readonly queue: QueuedStatement[] = [];
  private batches = 0;

  constructor(
    private readonly pool: pg.Pool,
    /** Batches in flight at once: one can run its statements while another commits. */
    private readonly maxBatches = 2,
    /** Upper bound on statements per transaction, so one batch cannot hold its locks for long. */
    private readonly maxBatch = 64,
  ) {}

  run(statement: NamedStatement): Promise<pg.QueryResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ statement, resolve, reject, result: undefined });
      if (this.batches >= this.maxBatches) return;
      this.batches++;
      // As on SQLite: let the requests read in this event-loop turn queue up and share the commit.
      setImmediate(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) await this.runBatch();
    } finally {
      this.batches--;
    }
  }

  private async runBatch(): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      // No connection: every waiting statement fails as its own transaction would have.
      for (const unit of this.queue.splice(0)) unit.reject(error);
      return;
    }
    let broken: unknown;
    try {
      // Taken once the connection is ours: everything that queued while we waited for it joins.
      const batch = this.queue.splice(0, this.maxBatch);
      if (batch.length === 0) return;
      if (batch.length === 1) {
        const unit = batch[0]!;
        try {
          unit.resolve(await client.query(unit.statement));
        } catch (error) {
          unit.reject(error);
        }
        return;
      }
      try {
        await client.query("begin");
      } catch (error) {
        broken = error;
        for (const unit of batch) unit.reject(error);
        return;
      }
      for (let i = 0; i < batch.length; i++) {
        const unit = batch[i]!;
        try {
          unit.result = await client.query(unit.statement);
        } catch (error) {
          // Nothing of the batch is committed: this unit fails, the others run again.
          unit.reject(error);
          try {
            await client.query("rollback");
          } catch (rollbackError) {
            broken = rollbackError;
          }
          this.queue.unshift(...batch.slice(0, i), ...batch.slice(i + 1));
          return;
        }
      }
      try {
        await client.query("commit");
      } catch (error) {
        broken = error;
        for (const unit of batch) unit.reject(error);
        return;
      }
      for (const unit of batch) unit.resolve(unit.result!);
    } finally {
      // A connection whose transaction state is unknown is not handed to anyone else.
      client.release(broken instanceof Error ? broken : undefined);
    }
  }
}

interface QueuedStatement {
  statement: NamedStatement;
  resolve: (result: pg.QueryResult) => void;
  reject: (error: unknown) => void;
  result: pg.QueryResult | undefined;
}
