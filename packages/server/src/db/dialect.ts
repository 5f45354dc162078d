import { PostgresAdapter, sql, type Kysely, type Transaction } from "kysely";
import type { Database } from "./schema.js";

/**
 * The few places SQLite and PostgreSQL differ. Ordinary queries go through Kysely; what cannot be
 * said the same way in both (id columns, constraint-error vocabulary, row locks, the delivery
 * engine's claim and recording) is a named primitive here or in another file of `src/db/`, and
 * code outside `src/db/` uses those: it never asks which database it runs on
 * (`test/unit/layering.test.ts` fails when it does).
 */
export type DialectName = "sqlite" | "postgres";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function dialectOf(db: Kysely<any>): DialectName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? "postgres" : "sqlite";
}

/** Column type of an auto-incrementing integer primary key. */
export function idColumnType(dialect: DialectName): "integer" | "bigserial" {
  return dialect === "postgres" ? "bigserial" : "integer";
}

/**
 * True for a unique-constraint violation on either database, so callers check one vocabulary
 * (PostgreSQL's SQLSTATE 23505; better-sqlite3's SQLITE_CONSTRAINT_UNIQUE / _PRIMARYKEY).
 */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return (
    code === "23505" ||
    code === "SQLITE_CONSTRAINT_UNIQUE" ||
    code === "SQLITE_CONSTRAINT_PRIMARYKEY"
  );
}

/** True for a foreign-key violation on either database (23503 / SQLITE_CONSTRAINT_FOREIGNKEY). */
export function isForeignKeyViolation(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return code === "23503" || code === "SQLITE_CONSTRAINT_FOREIGNKEY";
}

/** One value per dialect, for `byDialect`. */
export interface PerDialect<T> {
  sqlite: T;
  postgres: T;
}

/**
 * The one of `choices` for the database `db` runs on (a Kysely instance or a transaction). For
 * the few statements that are two texts on purpose, each beside its reasons in its own file (the
 * delivery engine's claim and recording): the caller keeps both in plain view and says why there
 * are two, and the choice between them is made here. Anything smaller than a statement is a named
 * primitive below instead.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function byDialect<T>(db: Kysely<any>, choices: PerDialect<T>): T {
  return choices[dialectOf(db)];
}

/**
 * Whether the database is a file in this process's data directory (SQLite), rather than a server
 * that processes on other hosts share (PostgreSQL). What every process must see alike (generated
 * keys) can then live in files beside it; with a server it must live in the database.
 */
export function isEmbedded(dialect: DialectName): boolean {
  return dialect === "sqlite";
}

/** The database in a few words, for people (the start banner): no URL, which may hold a password. */
export function databaseInBrief(dialect: DialectName, dataDir: string): string {
  return dialect === "sqlite" ? `SQLite in ${dataDir}` : "PostgreSQL";
}

/**
 * `select`, reading its rows FOR UPDATE where the database locks rows (PostgreSQL), so that two
 * transactions that read and then write the same row serialize; as it is on SQLite, which has no
 * row locks (nor the syntax): its single writer serializes every writing transaction already.
 */
export function withRowLock<Q extends { forUpdate(): Q }>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  db: Kysely<any>,
  select: Q,
): Q {
  return dialectOf(db) === "postgres" ? select.forUpdate() : select;
}

/**
 * Locks the rows of `table` with these ids, in id order, until the end of the transaction `trx`,
 * so that two transactions about to update several of the same rows queue up instead of
 * deadlocking (each would otherwise lock them in whatever order its plan visits them). PostgreSQL:
 * FOR NO KEY UPDATE, the lock an UPDATE of non-key columns takes itself; FOR UPDATE would also
 * block the foreign-key checks (KEY SHARE) of rows being inserted that reference these, which
 * could deadlock with them. SQLite: nothing to do, its single writer holds the whole database for
 * the transaction.
 */
export async function lockRowsInIdOrder(
  trx: Transaction<Database>,
  table: "webhooks" | "users",
  ids: readonly number[],
): Promise<void> {
  if (ids.length === 0 || dialectOf(trx) !== "postgres") return;
  await sql`SELECT id FROM ${sql.table(table)} WHERE id IN (${sql.join(ids)}) ORDER BY id FOR NO KEY UPDATE`.execute(
    trx,
  );
}

/**
 * How the fan-out's SQL (webhooks/outbound/delivery-engine/queue-deliveries.ts) spells the few
 * expressions the two databases write differently; the statement itself is written once.
 */
export interface SqlSpelling {
  /** Whether a numbered parameter may occur several times in one text (`$1`); `?` may not. */
  readonly reusesParameters: boolean;
  /** The placeholder of the k-th parameter (from 1), of the PostgreSQL type `type`. */
  parameter(k: number, type: string): string;
  /** True when the text `needle` occurs in the text `haystack`. */
  contains(haystack: string, needle: string): string;
  /** A FROM item: the strings of the JSON array `json`, as the column "value" of `alias`. */
  jsonStrings(json: string, alias: string): string;
  /** An integer as text, to concatenate. */
  text(integer: string): string;
  /** An integer as text, zero-padded to `width` digits. */
  zeroPadded(integer: string, width: number): string;
}

const SPELLINGS: Record<DialectName, SqlSpelling> = {
  sqlite: {
    reusesParameters: false,
    parameter: () => "?",
    contains: (haystack, needle) => `instr(${haystack}, ${needle}) > 0`,
    jsonStrings: (json, alias) => `json_each(${json}) ${alias}`,
    text: (integer) => integer,
    zeroPadded: (integer, width) => `printf('%0${width}d', ${integer})`,
  },
  postgres: {
    reusesParameters: true,
    parameter: (k, type) => `$${k}::${type}`,
    contains: (haystack, needle) => `strpos(${haystack}, ${needle}) > 0`,
    jsonStrings: (json, alias) => `jsonb_array_elements_text(${json}::jsonb) ${alias}("value")`,
    text: (integer) => `${integer}::text`,
    zeroPadded: (integer, width) => `lpad(${integer}::text, ${width}, '0')`,
  },
};

export function sqlSpelling(dialect: DialectName): SqlSpelling {
  return SPELLINGS[dialect];
}

/**
 * Whether a unit of work can be ONE statement of data-modifying CTEs (`ParleyDatabase.statement`,
 * the post's common path): PostgreSQL. SQLite has no data-modifying CTEs, and runs in process, so
 * it has no round trips to save.
 */
export function writesInOneStatement(dialect: DialectName): boolean {
  return dialect === "postgres";
}
