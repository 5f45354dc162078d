import fs from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect } from "kysely";
import pg from "pg";
import { markStorageFull } from "./database-errors.js";
import type { DialectName } from "./dialect.js";
import { freeSpaceFor, LOW_FREE_SPACE_BYTES } from "./free-space.js";
import { GuardedDialect } from "./guarded-dialect.js";
import type { Database } from "./schema.js";

/**
 * An open connection (pool) to SQLite or PostgreSQL. Services write through the unit of work that
 * wraps it (`ParleyDatabase.transaction`, see unit-of-work.ts); this is what tests and the CLI open.
 */
export interface DatabaseConnection {
  readonly db: Kysely<Database>;
  readonly dialect: DialectName;
  /** PostgreSQL connection settings, for the dispatcher's LISTEN connection; undefined on SQLite. */
  readonly pgConfig: pg.PoolConfig | undefined;
  /**
   * PostgreSQL: the pool Kysely runs on, for what Kysely cannot send (named prepared statements,
   * see unit-of-work.ts `statement`); undefined on SQLite.
   */
  readonly pgPool: pg.Pool | undefined;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** postgres://... selects PostgreSQL; otherwise SQLite at `sqlitePath`. */
  databaseUrl?: string | undefined;
  sqlitePath?: string;
  /** PostgreSQL schema to use (tests isolate themselves in a schema of their own). */
  pgSchema?: string;
  poolSize?: number;
  /**
   * The longest a query waits for the database (PARLEY_DATABASE_TIMEOUT_MS): for a connection from
   * the pool, for a lock, for the answer of a server that does not answer. Past it the query fails
   * with an error that database-errors.ts calls "unavailable". Unset: SQLite waits 5 s for a lock,
   * PostgreSQL waits as long as it takes (migrations, the CLI, benchmarks).
   */
  timeoutMs?: number | undefined;
}

// BIGINT (int8) columns hold epoch milliseconds and ids: well inside Number's exact range.
const pgTypes = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === 20) return (value: string) => Number(value);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return pg.types.getTypeParser(oid, format as any);
  },
};

/**
 * Kysely prepares every query afresh, and better-sqlite3 compiles SQL on each prepare(). Reusing
 * the compiled statement for the same SQL text cut a short write transaction's cost roughly in half
 * (ingest benchmark). Safe on one connection: Kysely runs one query at a time on it. Bounded, least
 * recently used out first.
 */
function withStatementCache(sqlite: SQLite.Database, max = 500) {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string): SQLite.Statement {
      let statement = statements.get(sql);
      if (statement) {
        statements.delete(sql);
      } else {
        statement = sqlite.prepare(sql);
        if (statements.size >= max) statements.delete(statements.keys().next().value!);
      }
      statements.set(sql, statement);
      return statement;
    },
  };
}

/**
 * Creates the database file readable by its owner only (0600, in a 0700 directory), before SQLite
 * opens it: SQLite gives its -wal and -shm files the database file's permissions, so they are
 * private too. Files and directories from an earlier, more open install are tightened.
 */
function createPrivateFile(file: string): void {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.closeSync(fs.openSync(file, "a", 0o600));
  for (const [target, mode] of [
    [dir, 0o700],
    [file, 0o600],
    [`${file}-wal`, 0o600],
    [`${file}-shm`, 0o600],
  ] as const) {
    // Best effort on what an operator made (a mounted volume we do not own stays as it is).
    try {
      fs.chmodSync(target, mode);
    } catch {
      /* missing or not ours */
    }
  }
}

const pools = new WeakMap<Kysely<Database>, pg.Pool>();

/**
 * The pg pool under a Kysely instance opened here (PostgreSQL only; undefined for SQLite, a
 * transaction or a Kysely built elsewhere): for the few hot statements of fixed text that run as
 * named prepared statements (`{ name, text, values }`), which Kysely cannot issue. PostgreSQL
 * parses and plans such a statement once per connection instead of at every call.
 */
export function pgPoolOf(db: Kysely<Database>): pg.Pool | undefined {
  return pools.get(db);
}

/**
 * The pg client of Parley's pools. node-postgres answers a query that outlives `query_timeout` with
 * an error but leaves the statement running on the connection, still in whatever transaction it
 * was in: the next user of that connection would queue behind it, and when a frozen server woke
 * up, the statement (and any transaction the pool handed on) could still commit. A query that
 * times out therefore closes its connection at once (the server rolls back what was open, and the
 * pool drops the client when it is released), and so does a ROLLBACK that fails, after which the
 * transaction's state is unknown. Statements still queued on the client fail at once.
 */
class BoundedClient extends pg.Client {
  // Every form of query() (promise, callback, submittable) passes through.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: any[]): any {
    const text: unknown = typeof args[0] === "string" ? args[0] : args[0]?.text;
    const onError = (error: unknown) => {
      const timedOut = (error as Error | undefined)?.message === "Query read timeout";
      const failedRollback = typeof text === "string" && /^\s*rollback\s*;?\s*$/i.test(text);
      if (timedOut || failedRollback) this.end().catch(() => undefined);
    };
    const last = args.length - 1;
    if (typeof args[last] === "function") {
      const callback = args[last] as (error: unknown, result: unknown) => void;
      args[last] = (error: unknown, result: unknown) => {
        if (error) onError(error);
        callback(error, result);
      };
    }
    const result = Reflect.apply(super.query, this, args) as unknown;
    if (result instanceof Promise) result.catch(onError);
    return result;
  }
}

/**
 * node-postgres settings that bound every wait for PostgreSQL by `timeoutMs`. The server gives up
 * a lock wait (at 8/10 of it) and then any statement (at 9/10) before the client stops waiting, so
 * a lock held elsewhere or a slow statement fails with PostgreSQL's own error (55P03, 57014), on a
 * connection that stays usable and with nothing left running; only a server that does not answer
 * at all meets the client's time-out, which closes the connection (BoundedClient).
 */
function pgTimeouts(timeoutMs: number): pg.PoolConfig {
  return {
    // Waiting for a pooled connection, or for a new one to be established.
    connectionTimeoutMillis: timeoutMs,
    // No answer from the server (frozen, or a network that drops packets).
    query_timeout: timeoutMs,
    lock_timeout: Math.max(1, Math.floor(timeoutMs * 0.8)),
    statement_timeout: Math.max(1, Math.floor(timeoutMs * 0.9)),
  };
}

export function openDatabase(options: OpenDatabaseOptions): DatabaseConnection {
  const timeoutMs = options.timeoutMs;
  if (options.databaseUrl) {
    const pgConfig: pg.PoolConfig = {
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      types: pgTypes as pg.CustomTypesConfig,
      ...(options.pgSchema ? { options: `-c search_path=${options.pgSchema}` } : {}),
      ...(timeoutMs === undefined ? {} : pgTimeouts(timeoutMs)),
    };
    const pool = new pg.Pool({ ...pgConfig, Client: BoundedClient });
    // An idle client that loses its connection (database restart) must not crash the process.
    pool.on("error", () => {});
    // Nor one that is checked out (inside a transaction, between two statements): pg emits
    // 'error' on it with no listener attached. Its query fails, and the pool drops it on release.
    pool.on("connect", (client) => client.on("error", () => {}));
    const db = new Kysely<Database>({
      dialect: new GuardedDialect(new PostgresDialect({ pool })),
    });
    pools.set(db, pool);
    return {
      db,
      dialect: "postgres",
      pgConfig,
      pgPool: pool,
      async close() {
        await db.destroy();
        // Kysely ends the pool only if it ever ran a query on it.
        if (!pool.ended) await pool.end();
      },
    };
  }
  const file = options.sqlitePath ?? ":memory:";
  if (file !== ":memory:") createPrivateFile(file);
  const sqlite = new SQLite(file);
  // WAL lets readers run beside the writer; busy_timeout makes a second process wait instead of
  // failing (SQLITE_BUSY after it: "unavailable"); synchronous=NORMAL is durable across process
  // crashes in WAL mode.
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma(`busy_timeout = ${timeoutMs ?? 5000}`);
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("foreign_keys = ON");
  // A deleted message's content must not stay readable in the file: freed space (a row's old
  // cell, overflow pages, deleted revisions) is overwritten with zeros (db/erase-freed-content.ts
  // empties the write-ahead log after such a delete).
  sqlite.pragma("secure_delete = ON");
  // Concurrent posts share a transaction with a savepoint each (db/batched-transactions.ts). A
  // savepoint keeps the pages it changes in a statement journal, which SQLite spills to a temporary
  // FILE past 64 KiB: one pwrite per page per savepoint, which made each index on the delivery
  // table cost a post about 4 µs of system time. In memory, the journal lasts only until the batch
  // commits and holds at most the pages the batch touches.
  sqlite.pragma("temp_store = MEMORY");
  const db = new Kysely<Database>({
    dialect: new GuardedDialect(
      new SqliteDialect({ database: withStatementCache(sqlite) }),
      (error) => {
        // SQLite reports ENOSPC as SQLITE_FULL on most writes, but as an I/O error on some (growing
        // the shared-memory index, syncing): with the disk out of space, that is what it was.
        const code = (error as { code?: unknown } | undefined)?.code;
        if (typeof code !== "string" || !code.startsWith("SQLITE_IOERR")) return;
        const free = freeSpaceFor(file);
        if (free !== undefined && free < LOW_FREE_SPACE_BYTES) markStorageFull(error);
      },
    ),
  });
  return {
    db,
    dialect: "sqlite",
    pgConfig: undefined,
    pgPool: undefined,
    close: () => db.destroy(),
  };
}
