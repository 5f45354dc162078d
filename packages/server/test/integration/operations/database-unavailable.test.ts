import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import SQLite from "better-sqlite3";
import { sql } from "kysely";
import pg from "pg";
import type { InboundWebhookWithToken } from "@parley/client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../helpers/build-app.js";
import {
  describeEachDialect,
  TEST_DATABASE_URL,
  type TestDialect,
} from "../../helpers/dialects.js";
import { createWebhook, ingest, ingestSlack } from "../webhooks/inbound/inbound-helpers.js";

/** The database time-out of these apps (PARLEY_DATABASE_TIMEOUT_MS), short for the test. */
const TIMEOUT_MS = 500;
/** What a loaded machine may add to it. */
const SLACK_MS = 1_000;
/** Without the time-out a post would wait for the lock for ever: the test lets go after this. */
const LET_GO_AFTER_MS = TIMEOUT_MS + SLACK_MS + 2_000;

/**
 * Another connection takes the lock every write needs and holds it until released: on SQLite the
 * database's write lock (BEGIN IMMEDIATE), on PostgreSQL the tables a post and the readiness probe
 * write (LOCK TABLE).
 */
async function holdWriteLock(
  t: TestApp,
  dialect: TestDialect,
  file: string,
): Promise<() => Promise<void>> {
  let release: () => Promise<void>;
  if (dialect.name === "sqlite") {
    const other = new SQLite(file);
    other.exec("BEGIN IMMEDIATE");
    release = async () => {
      other.exec("ROLLBACK");
      other.close();
    };
  } else {
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(
      t.ctx.db,
    );
    const schema = rows[0]!.schema;
    const other = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await other.connect();
    await other.query("begin");
    await other.query(`lock table "${schema}".messages, "${schema}".job_locks in exclusive mode`);
    release = async () => {
      await other.query("rollback");
      await other.end();
    };
  }
  let released: Promise<void> | undefined;
  const once = () => (released ??= release());
  const timer = setTimeout(() => void once(), LET_GO_AFTER_MS);
  return async () => {
    clearTimeout(timer);
    await once();
  };
}

/** Runs `work` and answers its result with how long it took. */
async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const result = await work();
  return [result, performance.now() - started];
}

describeEachDialect("a write lock held by another connection, on $name", (dialect) => {
  let t: TestApp;
  let dir: string;
  let file: string;
  let webhook: InboundWebhookWithToken;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-locked-"));
    file = path.join(dir, "parley.db");
    // A file (another connection opens it), and the time-out set as `parley serve` sets it.
    const bounded: TestDialect = {
      name: dialect.name,
      open: () => dialect.open({ sqlitePath: file, timeoutMs: TIMEOUT_MS }),
    };
    t = await createTestApp(bounded);
    webhook = await createWebhook(t);
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("answers a post 503 database_unavailable with Retry-After within the time-out, and posts once the lock is released", async () => {
    const release = await holdWriteLock(t, dialect, file);
    let answer;
    let tookMs;
    try {
      [answer, tookMs] = await timed(() => ingest(t, webhook.token, { content: "while locked" }));
    } finally {
      await release();
    }
    expect(answer.statusCode).toBe(503);
    expect(answer.headers["retry-after"]).toBe("5");
    expect(answer.json()).toMatchObject({ status: 503, code: "database_unavailable" });
    expect(tookMs).toBeLessThan(TIMEOUT_MS + SLACK_MS);

    const after = await ingest(t, webhook.token, { content: "after the lock" });
    expect(after.statusCode).toBe(200);
  });

  it("answers the Slack form 503 database_unavailable with Retry-After too", async () => {
    const release = await holdWriteLock(t, dialect, file);
    let answer;
    try {
      answer = await ingestSlack(t, webhook.token, { text: "while locked" });
    } finally {
      await release();
    }
    expect(answer.statusCode).toBe(503);
    expect(answer.headers["retry-after"]).toBe("5");
    expect(answer.body).toBe("database_unavailable");
  });

  it("answers /readyz 503 while writes wait for the lock, and 200 again once it is released", async () => {
    const release = await holdWriteLock(t, dialect, file);
    let readiness;
    let tookMs;
    let liveness;
    try {
      [readiness, tookMs] = await timed(() => t.app.inject({ url: "/readyz" }));
      // Liveness is the process, not the database.
      liveness = await t.app.inject({ url: "/healthz" });
    } finally {
      await release();
    }
    expect(readiness.statusCode).toBe(503);
    expect(readiness.json()).toMatchObject({ code: "service_unavailable" });
    expect(tookMs).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    expect(liveness.statusCode).toBe(200);

    expect((await t.app.inject({ url: "/readyz" })).statusCode).toBe(200);
  });
});
