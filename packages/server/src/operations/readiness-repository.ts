import { sql, type Kysely } from "kysely";
import { databaseFailureOf } from "../db/database-errors.js";
import { databaseFreeSpace, LOW_FREE_SPACE_BYTES } from "../db/free-space.js";
import type { Database } from "../db/schema.js";

/** The `job_locks` row the readiness probe rewrites (a heartbeat, never a lock: locked_until 0). */
export const READINESS_PROBE_ROW = "readiness-probe";

/** Why the process is not ready, and the error behind it when there is one. */
export interface NotReady {
  reason: string;
  cause?: unknown;
}

/**
 * Whether the database takes writes now: on SQLite, whether the disk holding it has room left
 * (LOW_FREE_SPACE_BYTES); then, on either database, a write of one row that must commit within
 * the database time-out. A reachable database that cannot store anything (a full disk, a lock
 * held for longer than the time-out, a read-only server) is not ready, and is again as soon as
 * the write commits. Undefined when ready.
 */
export async function checkWritable(
  db: Kysely<Database>,
  now: number,
): Promise<NotReady | undefined> {
  try {
    const free = await databaseFreeSpace(db);
    if (free !== undefined && free < LOW_FREE_SPACE_BYTES)
      return {
        reason: `the disk holding the database is full (${Math.floor(free / 1024)} KiB free)`,
      };
    await sql`
      insert into job_locks (name, locked_until, last_run_at)
      values (${READINESS_PROBE_ROW}, 0, ${now})
      on conflict (name) do update set last_run_at = excluded.last_run_at
    `.execute(db);
    return undefined;
  } catch (error) {
    switch (databaseFailureOf(error)) {
      case "storage_full":
        return { reason: "the disk holding the database is full", cause: error };
      case "unavailable":
        return { reason: "the database did not take a write in time", cause: error };
      default:
        return { reason: "the database does not take writes", cause: error };
    }
  }
}
