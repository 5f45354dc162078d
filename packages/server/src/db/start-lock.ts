import fs from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";
import pg from "pg";

/** Where the database is: PostgreSQL when `databaseUrl` is set, else the SQLite file. */
export interface StartLockLocation {
  databaseUrl?: string | undefined;
  sqlitePath: string;
}

/** How long a starting process waits for another one to finish starting before it gives up. */
const START_LOCK_WAIT_MS = 10 * 60_000;

/**
 * Runs `work` (the migrations, the first admin) while this process holds the database's start
 * lock, so that processes starting together on one database take turns: the second one finds the
 * schema migrated and the admin created, and neither fails half-way or times out in the other's
 * shadow. `onWait` is called once when another process holds the lock (the log says why the start
 * pauses).
 *
 * PostgreSQL: a session advisory lock (keyed by the schema, so installs sharing a database in
 * separate schemas do not wait for each other), on a connection of its own, which `work`'s own
 * connections do not need; a process that dies loses its session and the lock with it.
 *
 * SQLite: an exclusive lock on a file beside the database (`parley.db.start-lock`, an empty SQLite
 * database used only for its lock). Not the database file's own write lock: the migrations take
 * that themselves, on their own connection (migration 008 opens its own transaction), and SQLite's
 * locks are held per connection, so a lock held on the database by one connection of this process
 * would shut out its own migrations. The operating system releases the lock when the process
 * dies.
 */
export async function withStartLock<T>(
  location: StartLockLocation,
  work: () => Promise<T>,
  onWait: () => void = () => {},
): Promise<T> {
  return location.databaseUrl
    ? withAdvisoryLock(location.databaseUrl, work, onWait)
    : withLockFile(`${location.sqlitePath}.start-lock`, work, onWait);
}

/** Any constant: the start lock's advisory key is this hashed with the schema's name. */
const KEY_SALT = "parley:start";

async function withAdvisoryLock<T>(
  databaseUrl: string,
  work: () => Promise<T>,
  onWait: () => void,
): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  // A lost connection fails the query waiting on it; nothing else listens for this.
  client.on("error", () => {});
  await client.connect();
  try {
    const key = `hashtextextended('${KEY_SALT}:' || current_schema(), 0)`;
    const tried = await client.query<{ locked: boolean }>(
      `SELECT pg_try_advisory_lock(${key}) AS locked`,
    );
    if (!tried.rows[0]?.locked) {
      onWait();
      await client.query(`SET statement_timeout = ${START_LOCK_WAIT_MS}`);
      await client.query(`SELECT pg_advisory_lock(${key})`);
    }
    try {
      return await work();
    } finally {
      await client.query(`SELECT pg_advisory_unlock(${key})`).catch(() => undefined);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function withLockFile<T>(
  file: string,
  work: () => Promise<T>,
  onWait: () => void,
): Promise<T> {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const lock = new SQLite(file);
  fs.chmodSync(file, 0o600);
  try {
    // In SQLite's default (rollback journal) mode, BEGIN EXCLUSIVE locks the file at once, with
    // nothing written.
    // Polled rather than waited for in SQLite's busy handler, which would block the event loop.
    lock.pragma("busy_timeout = 0");
    const deadline = Date.now() + START_LOCK_WAIT_MS;
    for (let waited = false; ;) {
      try {
        lock.exec("BEGIN EXCLUSIVE");
        break;
      } catch (error) {
        if ((error as { code?: string }).code !== "SQLITE_BUSY" || Date.now() > deadline)
          throw error;
        if (!waited) onWait();
        waited = true;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    try {
      return await work();
    } finally {
      lock.exec("COMMIT");
    }
  } finally {
    lock.close();
  }
}
