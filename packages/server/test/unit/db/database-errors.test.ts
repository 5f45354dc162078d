import { describe, expect, it } from "vitest";
import { databaseFailureOf, markStorageFull } from "../../../src/db/database-errors.js";
import { toAppError } from "../../../src/plugins/to-app-error.js";

const coded = (code: string, message = code) => Object.assign(new Error(message), { code });

describe("databaseFailureOf", () => {
  it.each([
    // SQLite: busy_timeout ran out, or a table locked by this connection's other statement.
    ["SQLITE_BUSY", "unavailable"],
    ["SQLITE_BUSY_SNAPSHOT", "unavailable"],
    ["SQLITE_LOCKED", "unavailable"],
    ["SQLITE_FULL", "storage_full"],
    // PostgreSQL.
    ["57P01", "unavailable"], // admin_shutdown
    ["57P03", "unavailable"], // cannot_connect_now
    ["53300", "unavailable"], // too_many_connections
    ["55P03", "unavailable"], // lock_not_available
    ["57014", "unavailable"], // query_canceled (statement_timeout)
    ["08006", "unavailable"], // connection_failure
    ["53100", "storage_full"], // disk_full
    ["ECONNREFUSED", "unavailable"],
    ["ECONNRESET", "unavailable"],
  ])("calls %s %s", (code, failure) => {
    expect(databaseFailureOf(coded(code))).toBe(failure);
  });

  it.each([
    "Query read timeout",
    "timeout exceeded when trying to connect",
    "Connection terminated unexpectedly",
    "Connection terminated due to connection timeout",
    "Client was closed and is not queryable",
  ])("calls node-postgres's %j unavailable", (message) => {
    expect(databaseFailureOf(new Error(message))).toBe("unavailable");
  });

  it("looks through cause and AggregateError", () => {
    expect(databaseFailureOf(new Error("wrapped", { cause: coded("SQLITE_FULL") }))).toBe(
      "storage_full",
    );
    expect(
      databaseFailureOf(new AggregateError([coded("ECONNREFUSED")], "connect ECONNREFUSED")),
    ).toBe("unavailable");
  });

  it("calls an I/O error a full disk only once marked so", () => {
    const error = coded("SQLITE_IOERR_SHMSIZE", "disk I/O error");
    expect(databaseFailureOf(error)).toBeUndefined();
    markStorageFull(error);
    expect(databaseFailureOf(error)).toBe("storage_full");
  });

  it("leaves every other error alone", () => {
    for (const error of [
      coded("SQLITE_CONSTRAINT_UNIQUE"),
      coded("23505"),
      new Error("boom"),
      "a string",
      undefined,
    ])
      expect(databaseFailureOf(error)).toBeUndefined();
  });
});

describe("toAppError for database failures", () => {
  it("answers an unavailable database 503 database_unavailable with Retry-After", () => {
    const appError = toAppError(coded("55P03", "canceling statement due to lock timeout"));
    expect(appError).toMatchObject({ code: "database_unavailable", status: 503 });
    expect(appError.headers).toEqual({ "Retry-After": "5" });
  });

  it("answers a full disk 507 insufficient_storage", () => {
    expect(toAppError(coded("SQLITE_FULL", "database or disk is full"))).toMatchObject({
      code: "insufficient_storage",
      status: 507,
    });
  });

  it("answers any other error 500 internal_error", () => {
    expect(toAppError(coded("SQLITE_CONSTRAINT_CHECK"))).toMatchObject({
      code: "internal_error",
      status: 500,
    });
  });
});
