/**
 * The delivery search (GET /api/admin/deliveries) at a million deliveries: rows generated in the
 * database itself (one INSERT ... SELECT over a series), spread over 20 endpoints, 12 events,
 * 500 rooms and 30 days, with 3% FAILED and 2% EXHAUSTED as a long-running install has them. Then
 * filtered searches with random values through the same service function the route calls, and
 * their p50 / p95. Target: p95 under 50 ms on SQLite and PostgreSQL.
 *
 *   npm run bench -w @parley/server            (all)
 *   npx tsx bench/delivery-search.bench.ts     (this one; PostgreSQL with PARLEY_TEST_DATABASE_URL)
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { sql } from "kysely";
import pg from "pg";
import { createAppContext, type AppContext } from "../src/app-context.js";
import { loadConfig } from "../src/config/load-config.js";
import { sealSecret } from "../src/config/secret-box.js";
import { openDatabase } from "../src/db/open-database.js";
import {
  searchAllDeliveries,
  type DeliverySearchQuery,
} from "../src/webhooks/outbound/admin-api/deliveries-service.js";

const ROWS = Number(process.env.PARLEY_BENCH_SEARCH_ROWS ?? 1_000_000);
const ENDPOINTS = 20;
const ROOMS = 500;
const SEARCHES = 100;
const DAY = 86_400_000;

interface Target {
  name: string;
  ctx: AppContext;
  cleanup(): Promise<void>;
}

function config(dataDir: string, databaseUrl?: string) {
  // PostgreSQL keeps generated keys in the database, wrapped by a master key from outside.
  const masterKey = crypto.randomBytes(32).toString("hex");
  return loadConfig({}, { dataDir, databaseUrl, logLevel: "silent", masterKey });
}

async function sqliteTarget(): Promise<Target> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-"));
  const ctx = await createAppContext(config(dataDir));
  return {
    name: "SQLite",
    ctx,
    async cleanup() {
      await ctx.database.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function postgresTarget(url: string): Promise<Target> {
  const schema = `bench_${crypto.randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-"));
  const database = openDatabase({ databaseUrl: url, pgSchema: schema });
  const ctx = await createAppContext(config(dataDir, url), { database });
  return {
    name: "PostgreSQL",
    ctx,
    async cleanup() {
      await ctx.database.close();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Generates the rows in the database: no round trip per row. */
async function generate(ctx: AppContext, start: number): Promise<void> {
  const now = Date.now();
  await ctx.db
    .insertInto("webhooks")
    .values(
      Array.from({ length: ENDPOINTS }, (_, i) => ({
        name: `endpoint ${i + 1}`,
        url: `https://hooks.example.com/${i + 1}`,
        secret_ciphertext: sealSecret(ctx.keys.secretKey, "bench-secret-0123456789"),
        events: '["*"]',
        enabled: 1 as const,
        created_at: now,
        updated_at: now,
      })),
    )
    .execute();
  // n -> endpoint n % 20 + 1, event n % 12, room n % 500 + 1 for room events, message n for
  // MESSAGE_CREATED, status by n % 100 (3 FAILED, 2 EXHAUSTED, 1 PENDING, the rest SUCCESS),
  // created over 30 days in id order.
  const columns = sql`(webhook_id, event, body, status, attempts, next_attempt_at, locked_until,
    locked_by, last_response_status, created_at, updated_at, event_id, room_id, message_id)`;
  const event = sql`CASE n % 12 WHEN 0 THEN 'MESSAGE_CREATED' WHEN 1 THEN 'USER_JOINED_ROOM'
    WHEN 2 THEN 'USER_LEFT_ROOM' WHEN 3 THEN 'ROOM_CREATED' WHEN 4 THEN 'ROOM_DELETED'
    WHEN 5 THEN 'FILE_UPLOADED' WHEN 6 THEN 'FILE_INFECTION_DETECTED'
    WHEN 7 THEN 'ADMIN_USER_DISABLED' WHEN 8 THEN 'ADMIN_USER_DELETED'
    WHEN 9 THEN 'ADMIN_ROOM_DELETED' WHEN 10 THEN 'MESSAGE_AUTO_MODERATION_FLAGGED'
    ELSE 'MESSAGE_AUTO_MODERATION_QUARANTINED' END`;
  const status = sql`CASE WHEN n % 100 < 3 THEN 'FAILED' WHEN n % 100 < 5 THEN 'EXHAUSTED'
    WHEN n % 100 < 6 THEN 'PENDING' ELSE 'SUCCESS' END`;
  const created = sql`${start} + (n * ${30 * DAY}) / ${ROWS}`;
  const room = sql`CASE WHEN n % 12 IN (0, 1, 2, 3, 4, 5, 9) THEN n % ${ROOMS} + 1 END`;
  const message = sql`CASE WHEN n % 12 = 0 THEN n END`;
  const body = sql`'{"event":"bench","timestamp":"2026-11-22T10:00:00.000Z","webhookId":1,"data":{"n":' || n || '}}'`;
  if (ctx.database.dialect === "postgres") {
    await sql`
      INSERT INTO webhook_deliveries ${columns}
      SELECT n % ${ENDPOINTS} + 1, ${event}, ${body}, ${status}, 1, NULL, NULL, NULL, 204,
        ${created}, ${created}, 'evt_' || lpad(n::text, 26, '0'), ${room}, ${message}
      FROM generate_series(1, ${ROWS}::bigint) AS n
    `.execute(ctx.db);
    await sql`ANALYZE webhook_deliveries`.execute(ctx.db);
  } else {
    await sql`
      WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${ROWS})
      INSERT INTO webhook_deliveries ${columns}
      SELECT n % ${ENDPOINTS} + 1, ${event}, ${body}, ${status}, 1, NULL, NULL, NULL, 204,
        ${created}, ${created}, 'evt_' || printf('%026d', n), ${room}, ${message}
      FROM s
    `.execute(ctx.db);
    await sql`ANALYZE`.execute(ctx.db);
  }
}

const pick = (n: number) => 1 + Math.floor(Math.random() * n);

async function benchTarget(target: Target): Promise<void> {
  const { ctx } = target;
  const start = Date.now() - 30 * DAY;
  const generateStart = performance.now();
  await generate(ctx, start);
  const generated = performance.now() - generateStart;
  const iso = (t: number) => new Date(t).toISOString();
  const searches: Array<[string, () => DeliverySearchQuery]> = [
    ["newest 50 (no filter)", () => ({ limit: 50 })],
    ["one endpoint", () => ({ webhookId: pick(ENDPOINTS), limit: 50 })],
    ["status EXHAUSTED", () => ({ status: "EXHAUSTED", limit: 50 })],
    [
      "endpoint + status FAILED",
      () => ({ webhookId: pick(ENDPOINTS), status: "FAILED", limit: 50 }),
    ],
    ["event", () => ({ event: "ROOM_CREATED", limit: 50 })],
    ["eventId", () => ({ eventId: `evt_${String(pick(ROWS)).padStart(26, "0")}`, limit: 50 })],
    ["roomId", () => ({ roomId: pick(ROOMS), limit: 50 })],
    ["messageId", () => ({ messageId: 12 * pick(ROWS / 12), limit: 50 })],
    [
      "roomId + time range (one day)",
      () => {
        const from = start + pick(29) * DAY;
        return { roomId: pick(ROOMS), since: iso(from), until: iso(from + DAY), limit: 50 };
      },
    ],
    [
      "endpoint + status + time range",
      () => {
        const from = start + pick(29) * DAY;
        return {
          webhookId: pick(ENDPOINTS),
          status: "EXHAUSTED",
          since: iso(from),
          until: iso(from + DAY),
          limit: 50,
        };
      },
    ],
  ];
  const all: number[] = [];
  const lines: string[] = [];
  for (const [name, query] of searches) {
    // Warm: plans and pages.
    for (let i = 0; i < 5; i++) await searchAllDeliveries(ctx, query());
    const times: number[] = [];
    for (let i = 0; i < SEARCHES; i++) {
      const t = performance.now();
      const page = await searchAllDeliveries(ctx, query());
      times.push(performance.now() - t);
      // Follow to the next page once in a while: it costs the same.
      if (i % 10 === 0 && page.hasMore) {
        const t2 = performance.now();
        await searchAllDeliveries(ctx, { ...query(), beforeId: page.items.at(-1)!.id });
        times.push(performance.now() - t2);
      }
    }
    times.sort((a, b) => a - b);
    all.push(...times);
    lines.push(
      `    ${name.padEnd(32)} p50 ${pct(times, 50).toFixed(1)} ms, p95 ${pct(times, 95).toFixed(1)} ms`,
    );
  }
  all.sort((a, b) => a - b);
  console.log(
    `\n${target.name}: delivery search at ${ROWS.toLocaleString("en")} deliveries ` +
      `(generated in ${(generated / 1000).toFixed(1)} s): filtered search p95 ${pct(all, 95).toFixed(1)} ms ` +
      `(target < 50 ms) ${pct(all, 95) < 50 ? "met" : "MISSED"}`,
  );
  for (const line of lines) console.log(line);
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

export async function runDeliverySearchBench(): Promise<void> {
  const targets: Array<() => Promise<Target>> = [sqliteTarget];
  const url = process.env.PARLEY_TEST_DATABASE_URL || process.env.DATABASE_URL;
  if (url) targets.push(() => postgresTarget(url));
  else console.log("(PostgreSQL skipped: set PARLEY_TEST_DATABASE_URL or DATABASE_URL)");
  for (const open of targets) {
    const target = await open();
    try {
      await benchTarget(target);
    } finally {
      await target.cleanup();
    }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runDeliverySearchBench();
}
