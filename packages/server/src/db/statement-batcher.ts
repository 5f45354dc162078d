import type pg from "pg";
import { databaseFailureOf } from "./database-errors.js";

/** One statement as PostgreSQL gets it: a named prepared statement (fixed text), fresh values. */
export interface NamedStatement {
  name: string;
  text: string;
  values: unknown[];
}

/**
 * How a unit can also run as one row of a statement that runs many such units at once. Units of
 * one batch with the same `key` are combined by `combine` (of any of them) into ONE statement.
 */
export interface CombinedForm {
  /** Units with the same key can be combined; in practice the name of their single statement. */
  key: string;
  /**
   * One statement for `forms` (in queue order, this one among them): its answer has one row per
   * unit, with a column "ord", the unit's place in `forms` counted from 1. Its text must not
   * depend on how many units there are, so it is prepared once. It may throw (the units then run
   * one by one).
   */
  combine(forms: ReadonlyArray<CombinedForm>): NamedStatement;
}

/**
 * Group commit on PostgreSQL for units of work that are each ONE statement (unit-of-work.ts
 * `statement`). Statements queued while a batch is starting run together in one transaction,
 * one after another on one connection, and commit once: one COMMIT, one WAL flush and, for
 * statements that NOTIFY, one turn of PostgreSQL's notify lock serve the whole batch.
 *
 * Units that have a combined form (CombinedForm) with the same key and are next to each other in
 * the batch run as ONE statement (their values as arrays), so a batch of posts costs one round
 * trip. A batch that is one statement (a lone unit, or one combined statement) runs without BEGIN
 * and COMMIT: a statement is its own transaction.
 *
 * No savepoints: a statement is atomic by itself, and a unit that refuses (a post to a deleted
 * room) writes nothing and reports it in its answer instead of failing. When a statement does
 * fail (a constraint, a lost connection), the transaction is rolled back, that unit rejects with
 * its error, and the others of the batch, none of which committed, are queued again to run in the
 * next batch, so one unit's failure is never another's. When a combined statement fails, it
 * cannot say whose fault it was: nothing of the batch committed, and its units are queued again
 * to run each as its own statement, so each gets its own answer. Except when the database is
 * unavailable (database-errors.ts: a lock wait or an answer that ran out of time, a lost
 * connection): then every unit of the batch fails with that error, instead of each waiting out
 * the time-out in turn.
 *
 * Guarantees, per unit: it commits or not at all; its promise resolves after the COMMIT that
 * made it durable returned (with its result rows: for a combined unit, its one row), or rejects
 * and nothing of it committed, except when COMMIT itself fails, where the outcome is as unknown as
 * for any transaction whose COMMIT failed. Statements of one batch run in queue order and see the
 * writes of those before them; units combined into one statement do not see each other's writes
 * (one snapshot), so only units independent of each other may have a combined form.
 */
export class StatementBatcher {
  private readonly queue: QueuedStatement[] = [];
  private batches = 0;

  constructor(
    private readonly pool: pg.Pool,
    /** Batches in flight at once: one can run its statements while another commits. */
    private readonly maxBatches = 2,
    /** Upper bound on units per transaction, so one batch cannot hold its locks for long. */
    private readonly maxBatch = 64,
  ) {}

  /**
   * Runs `statement` (or the statement `statement()` builds, only when it runs alone) as a unit of
   * work, combined with its neighbours when it has a `combined` form.
   */
  run(
    statement: NamedStatement | (() => NamedStatement),
    combined?: CombinedForm,
  ): Promise<pg.QueryResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ statement, combined, resolve, reject, result: undefined });
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
      const taken = this.queue.splice(0, this.maxBatch);
      for (const unit of taken) unit.result = undefined;
      const steps = stepsOf(taken);
      // Without the units whose statement could not be built (rejected already).
      const batch = steps.flatMap((step) => step.units);
      if (batch.length === 0) return;
      const single = steps.length === 1;
      if (!single) {
        try {
          await client.query("begin");
        } catch (error) {
          broken = error;
          for (const unit of batch) unit.reject(error);
          return;
        }
      }
      for (const step of steps) {
        let result: pg.QueryResult;
        try {
          result = await client.query(step.statement);
        } catch (error) {
          if (!single) {
            try {
              await client.query("rollback");
            } catch (rollbackError) {
              broken = rollbackError;
            }
          }
          if (databaseFailureOf(error) === "unavailable") {
            // A lock held elsewhere past lock_timeout, a server that stopped answering: the others
            // (none committed) would wait as long again, one after another. They fail with it.
            for (const unit of batch) unit.reject(error);
            return;
          }
          if (step.combined) {
            // Whose fault is unknown: each of its units runs again as its own statement.
            for (const unit of step.units) unit.combined = undefined;
          } else {
            // A lone statement: it fails, and the others (none committed) run again.
            step.units[0]!.reject(error);
          }
          this.queue.unshift(...batch.filter((unit) => step.combined || unit !== step.units[0]));
          return;
        }
        if (step.combined) answerEach(step.units, result);
        else step.units[0]!.result = result;
      }
      if (!single) {
        try {
          await client.query("commit");
        } catch (error) {
          broken = error;
          for (const unit of batch) unit.reject(error);
          return;
        }
      }
      for (const unit of batch) {
        if (unit.result) unit.resolve(unit.result);
        // Committed, but its answer is lost: never run it again.
        else unit.reject(new Error("a combined statement gave a unit no answer row"));
      }
    } finally {
      // A connection whose transaction state is unknown is not handed to anyone else.
      client.release(broken instanceof Error ? broken : undefined);
    }
  }
}

interface QueuedStatement {
  statement: NamedStatement | (() => NamedStatement);
  /** Cleared once its combined statement failed: the unit then runs alone. */
  combined: CombinedForm | undefined;
  resolve: (result: pg.QueryResult) => void;
  reject: (error: unknown) => void;
  result: pg.QueryResult | undefined;
}

/** One statement of a batch: a unit alone, or units combined. */
interface Step {
  units: QueuedStatement[];
  statement: NamedStatement;
  combined: boolean;
}

/**
 * The batch as statements: runs of neighbours with the same combined key become one statement.
 * A combined form that throws while combining leaves its units to run alone.
 */
function stepsOf(batch: QueuedStatement[]): Step[] {
  const steps: Step[] = [];
  let i = 0;
  while (i < batch.length) {
    const first = batch[i]!;
    let end = i + 1;
    if (first.combined) {
      const key = first.combined.key;
      while (end < batch.length && batch[end]!.combined?.key === key) end++;
    }
    const units = batch.slice(i, end);
    i = end;
    if (units.length > 1) {
      try {
        const statement = first.combined!.combine(units.map((unit) => unit.combined!));
        steps.push({ units, statement, combined: true });
        continue;
      } catch {
        for (const unit of units) unit.combined = undefined;
      }
    }
    for (const unit of units) {
      try {
        const statement = typeof unit.statement === "function" ? unit.statement() : unit.statement;
        steps.push({ units: [unit], statement, combined: false });
      } catch (error) {
        unit.reject(error);
      }
    }
  }
  return steps;
}

/** Gives each unit of a combined statement its row (column "ord": its place, from 1). */
function answerEach(units: QueuedStatement[], result: pg.QueryResult): void {
  const rows: unknown[] = new Array(units.length);
  for (const row of result.rows as Array<{ ord: unknown }>) rows[Number(row.ord) - 1] = row;
  units.forEach((unit, i) => {
    if (rows[i] !== undefined) unit.result = { ...result, rows: [rows[i]], rowCount: 1 };
  });
}
