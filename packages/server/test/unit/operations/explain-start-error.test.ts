import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load-config.js";
import { explainStartError } from "../../../src/operations/explain-start-error.js";

/** An error as Node.js, node-postgres or better-sqlite3 raise it: a message and its fields. */
function failure(message: string, fields: Record<string, unknown>): Error {
  return Object.assign(new Error(message), fields);
}

const sqlite = loadConfig({ PARLEY_DATA_DIR: "/srv/parley", PARLEY_PORT: "80" });
const postgres = loadConfig({
  DATABASE_URL: "postgres://parley:hunter2@db.internal:6432/chat",
  PARLEY_HOST: "10.0.0.5",
});

describe("start-up errors in plain words", () => {
  it("a port below 1024 without the right to it", () => {
    const error = failure("listen EACCES: permission denied 127.0.0.1:80", {
      code: "EACCES",
      syscall: "listen",
    });
    expect(explainStartError(error, sqlite)).toMatch(
      /^not allowed to listen on port 80: ports below 1024 need root or the CAP_NET_BIND_SERVICE capability/,
    );
  });

  it("a listen address this machine does not have", () => {
    const error = failure("listen EADDRNOTAVAIL", { code: "EADDRNOTAVAIL", syscall: "listen" });
    expect(explainStartError(error, postgres)).toBe(
      "10.0.0.5 is not an address of this machine: correct PARLEY_HOST or --host",
    );
  });

  it("a data directory on a read-only file system, or without permission", () => {
    const readOnly = failure("EROFS: read-only file system, open '/srv/parley/parley.db'", {
      code: "EROFS",
      path: "/srv/parley/parley.db",
    });
    expect(explainStartError(readOnly, sqlite)).toContain(
      "cannot write to the data directory /srv/parley: it is on a read-only file system",
    );
    const denied = failure("EACCES: permission denied, mkdir '/srv/parley/files'", {
      code: "EACCES",
      syscall: "mkdir",
      path: "/srv/parley/files",
    });
    expect(explainStartError(denied, sqlite)).toMatch(
      /^cannot write to the data directory \/srv\/parley: permission denied to the user running Parley \(uid \d+\)/,
    );
  });

  it("PostgreSQL refusing the password or the user, never showing the password", () => {
    const password = failure('password authentication failed for user "parley"', {
      code: "28P01",
    });
    expect(explainStartError(password, postgres)).toBe(
      'PostgreSQL refused the password of the user "parley" (DATABASE_URL)',
    );
    const hba = failure('no pg_hba.conf entry for host "10.0.0.5"', { code: "28000" });
    const explained = explainStartError(hba, postgres);
    expect(explained).toContain(
      'PostgreSQL refused the connection as "parley" to db.internal:6432/chat',
    );
    expect(explained).toContain("pg_hba.conf");
    expect(explained).not.toContain("hunter2");
  });

  it("PostgreSQL's host not resolving, or not answering", () => {
    const dns = failure("getaddrinfo ENOTFOUND db.internal", {
      code: "ENOTFOUND",
      hostname: "db.internal",
    });
    expect(explainStartError(dns, postgres)).toBe(
      'cannot find the PostgreSQL host "db.internal" of DATABASE_URL (its name does not resolve): correct DATABASE_URL',
    );
    const silent = failure("connect ETIMEDOUT 10.0.0.9:6432", { code: "ETIMEDOUT" });
    expect(explainStartError(silent, postgres)).toMatch(
      /^PostgreSQL at db\.internal:6432 \(DATABASE_URL\) did not answer/,
    );
  });

  it("anything else keeps its own message", () => {
    expect(explainStartError(new Error("something new"), sqlite)).toBe("something new");
  });
});
