import { PostgresAdapter, type Kysely } from "kysely";

/**
 * The few places SQLite and PostgreSQL differ. Ordinary queries go through Kysely; what cannot be
 * said the same way in both (id columns, constraint-error vocabulary, claiming) is decided here or
 * next to the query that needs it, keyed by this name.
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
