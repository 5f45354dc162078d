import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { openDatabase } from "../../src/db/open-database.js";
import { startPrivatePostgres } from "../helpers/private-postgres.js";
import { killAllServers } from "../helpers/spawn-server.js";
import { waitFor } from "../helpers/wait-for.js";
import { spawnWithIngestUrl } from "./e2e-support.js";

afterEach(killAllServers);

/** PARLEY_DATABASE_TIMEOUT_MS of the server under test. */
const TIMEOUT_MS = 1_000;
/** What a loaded machine may add to it. */
const SLACK_MS = 1_500;

/** An HTTP call that gives up after 10 s (without a time-out, a frozen database held it for ever). */
async function timedFetch(url: string, init: RequestInit = {}) {
  const started = performance.now();
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  const body = await res.text();
  return { status: res.status, headers: res.headers, body, tookMs: performance.now() - started };
}

// Freezing a database is only safe on one the test owns: a private instance, started here.
describe("a frozen PostgreSQL", { tags: ["postgres", "postgres-binaries"] }, () => {
  it("answers 503 database_unavailable with Retry-After within the time-out while it is stopped, and serves again by itself once it goes on", async () => {
    const pg = await startPrivatePostgres();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-dbfrozen-"));
    onTestFinished(async () => {
      await killAllServers();
      await pg.stop(); // thaws it first
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    const { server, ingestUrl } = await spawnWithIngestUrl(
      {
        PARLEY_DATA_DIR: dataDir,
        DATABASE_URL: pg.url,
        PARLEY_DATABASE_TIMEOUT_MS: String(TIMEOUT_MS),
      },
      "frozen",
    );
    const post = (content: string) =>
      timedFetch(ingestUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ content }),
      });
    expect((await post("before")).status).toBe(200);

    pg.freeze();
    const frozen = await post("while frozen");
    expect(frozen.status).toBe(503);
    expect(frozen.headers.get("retry-after")).toBe("5");
    expect(JSON.parse(frozen.body)).toMatchObject({ code: "database_unavailable" });
    expect(frozen.tookMs).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    const readiness = await timedFetch(`${server.url}/readyz`);
    expect(readiness.status).toBe(503);
    expect(readiness.tookMs).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    expect((await timedFetch(`${server.url}/healthz`)).status).toBe(200);
    // The log names what happened: no answer, or no connection, within the time-out.
    await waitFor("the log to name the time-out", () =>
      /Query read timeout|timeout exceeded|connection timeout/.test(server.output()),
    );

    pg.thaw();
    await waitFor("a post to succeed after the database went on", async () => {
      return (await post("after")).status === 200;
    });
    expect((await timedFetch(`${server.url}/readyz`)).status).toBe(200);
  }, 90_000);

  it("closes the connection of a statement that met the time-out, so nothing of its transaction commits once the server goes on", async () => {
    const pg = await startPrivatePostgres();
    onTestFinished(() => pg.stop());
    // One pooled connection: whatever the pool hands out next is the same one, unless it was closed.
    const database = openDatabase({ databaseUrl: pg.url, timeoutMs: TIMEOUT_MS, poolSize: 1 });
    onTestFinished(() => database.close());
    const pool = database.pgPool!;
    await pool.query("create table t (v text not null)");

    const client = await pool.connect();
    await client.query("begin");
    await client.query("insert into t (v) values ('lost')");
    pg.freeze();
    await expect(client.query("insert into t (v) values ('lost too')")).rejects.toThrow(
      "Query read timeout",
    );
    // Handed back as a caller that does not look at the error would.
    client.release();
    pg.thaw();

    const next = await pool.connect();
    try {
      await next.query("begin");
      await next.query("insert into t (v) values ('later')");
      await next.query("commit");
    } finally {
      next.release();
    }
    expect((await pool.query("select v from t order by v")).rows).toEqual([{ v: "later" }]);
  }, 60_000);
});
