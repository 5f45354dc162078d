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
