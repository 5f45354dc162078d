import { sql, type Kysely } from "kysely";
import { dialectOf } from "./dialect.js";
import type { Database } from "./schema.js";

/** A job that one process at a time may run, whichever processes share the database. */
export interface JobLock {
  /** Its `job_locks` row (SQLite). */
  name: string;
  /** Its advisory lock key (PostgreSQL): any constant bigint, one per job. */
  advisoryKey: bigint;
  /** How long the `job_locks` lease lasts if the process dies without giving it back (SQLite). */
  leaseMs: number;
  now: number;
}

/**
 * Runs `work` unless another process is running the same job; answers `{ ran: false }` then,
 * without waiting. `work` gets the database handle to run on.
 *
 * PostgreSQL: a session advisory lock on one pooled connection, held while `work` runs on that
 * connection and released after it (a process that dies loses its session, and the lock with it).
 * SQLite: a lease on the job's `job_locks` row, taken by one insert-or-update statement (so two
 * processes cannot both win) unless a live lease holds it, and given back after `work`.
 */
export async function withJobLock<T>(
  db: Kysely<Database>,
  lock: JobLock,
  work: (db: Kysely<Database>) => Promise<T>,
): Promise<{ ran: true; value: T } | { ran: false }> {
  if (dialectOf(db) === "postgres") {
    return db.connection().execute(async (conn) => {
      const { rows } = await sql<{ locked: boolean }>`
        SELECT pg_try_advisory_lock(${lock.advisoryKey.toString()}::bigint) AS locked
      `.execute(conn);
      if (!rows[0]?.locked) return { ran: false };
      try {
        return { ran: true, value: await work(conn) };
      } finally {
        await sql`SELECT pg_advisory_unlock(${lock.advisoryKey.toString()}::bigint)`.execute(conn);
      }
    });
  }

  const taken = await sql<{ name: string }>`
    INSERT INTO job_locks (name, locked_until, last_run_at)
    VALUES (${lock.name}, ${lock.now + lock.leaseMs}, ${lock.now})
    ON CONFLICT (name) DO UPDATE
      SET locked_until = excluded.locked_until, last_run_at = excluded.last_run_at
      WHERE job_locks.locked_until < ${lock.now}
    RETURNING name
  `.execute(db);
  if (taken.rows.length === 0) return { ran: false };
  try {
    return { ran: true, value: await work(db) };
  } finally {
    await db
      .updateTable("job_locks")
      .set({ locked_until: 0 })
      .where("name", "=", lock.name)
      .execute();
  }
}
