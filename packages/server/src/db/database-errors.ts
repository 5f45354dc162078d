/**
 * What a database error means for the request that met it, in one vocabulary for SQLite and
 * PostgreSQL:
 *
 * - "unavailable": the database did not serve the request within the bound (no connection, a
 *   lock held elsewhere, no answer, the server shutting down or refusing connections). Trying
 *   again later may succeed.
 * - "storage_full": the disk holding the database is full; nothing of the failed write was kept.
 *
 * Anything else (a constraint, a bug) is none of these and stays what it was.
 */
export type DatabaseFailure = "unavailable" | "storage_full";

/** PostgreSQL SQLSTATEs that mean "not now" (class 08 is matched as a class). */
const PG_UNAVAILABLE = new Set([
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up, shutting down, recovering)
  "53300", // too_many_connections
  "55P03", // lock_not_available (lock_timeout)
  "57014", // query_canceled (statement_timeout, pg_cancel_backend)
]);

/** Socket errors on the way to PostgreSQL. */
const NETWORK_UNAVAILABLE = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);

/**
 * node-postgres and pg-pool report a time-out or a lost connection as a plain Error with one of
 * these messages (no code).
 */
const PG_CLIENT_UNAVAILABLE = [
  "Query read timeout", // query_timeout: no answer from the server
  "timeout exceeded when trying to connect", // no pooled connection free within the bound
  "Connection terminated", // also "... unexpectedly" and "... due to connection timeout"
  "Client has encountered a connection error and is not queryable",
  "Client was closed and is not queryable",
];

/** Errors marked by the layer that saw them fail for lack of space (see markStorageFull). */
const storageFull = new WeakSet<object>();

/**
 * Marks `error` as a full disk: for errors whose code alone does not say so (SQLite's
 * SQLITE_IOERR_* when the write failed with ENOSPC, seen by the connection that knows its file).
 */
export function markStorageFull(error: unknown): void {
  if (typeof error === "object" && error !== null) storageFull.add(error);
}

/** The failure `error` stands for, looking through `cause` and AggregateError's `errors`. */
export function databaseFailureOf(error: unknown, depth = 0): DatabaseFailure | undefined {
  if (typeof error !== "object" || error === null || depth > 4) return undefined;
  if (storageFull.has(error)) return "storage_full";
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    if (code === "SQLITE_FULL" || code === "53100") return "storage_full";
    if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) return "unavailable";
    if (PG_UNAVAILABLE.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return "unavailable";
    if (NETWORK_UNAVAILABLE.has(code)) return "unavailable";
  }
  const message = (error as { message?: unknown }).message;
  if (
    typeof message === "string" &&
    PG_CLIENT_UNAVAILABLE.some((known) => message.startsWith(known))
  )
    return "unavailable";
  const inner = [
    (error as { cause?: unknown }).cause,
    ...(error instanceof AggregateError ? (error.errors as unknown[]) : []),
  ];
  for (const next of inner) {
    const failure = databaseFailureOf(next, depth + 1);
    if (failure) return failure;
  }
  return undefined;
}

/** A ROLLBACK that failed after `error`, kept beside it for the log (see noteRollbackFailure). */
const rollbackFailures = new WeakMap<object, unknown>();

/**
 * Records that rolling back after `error` failed too. The caller throws `error`, the cause: a
 * failed ROLLBACK (SQLite's "cannot rollback - no transaction is active" once a full disk rolled
 * the transaction back by itself) says nothing about why the work failed.
 */
export function noteRollbackFailure(error: unknown, rollbackError: unknown): void {
  if (typeof error === "object" && error !== null && !rollbackFailures.has(error))
    rollbackFailures.set(error, rollbackError);
}

/** The ROLLBACK failure recorded beside `error`, if any. */
export function rollbackFailureOf(error: unknown): unknown {
  return typeof error === "object" && error !== null ? rollbackFailures.get(error) : undefined;
}
