/**
 * The delivery search (GET /api/admin/deliveries) at a million deliveries: rows generated in the
 * database itself (bench/seed-deliveries.ts: one INSERT ... SELECT over a series), spread over 20 endpoints, 12 events,
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
import pg from "pg";
import { createAppContext, type AppContext } from "../src/app-context.js";
import { loadConfig } from "../src/config/load-config.js";
import { openDatabase } from "../src/db/open-database.js";
import {
  searchAllDeliveries,
  type DeliverySearchQuery,
} from "../src/webhooks/outbound/admin-api/deliveries-service.js";
import { DAY_MS as DAY, insertEndpoints, seedDeliveries } from "./seed-deliveries.js";

export const SEARCH_ROWS = Number(process.env.PARLEY_BENCH_SEARCH_ROWS ?? 1_000_000);
const ENDPOINTS = 20;
const ROOMS = 500;
const SEARCHES = 100;

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

/** The rows: 20 endpoints, 500 rooms, 30 days, the status mix of a long-running install. */
async function generate(ctx: AppContext, start: number, rows: number): Promise<void> {
  const ids = await insertEndpoints(ctx, ENDPOINTS, { enabled: true });
  await seedDeliveries(ctx, {
    rows,
    firstWebhookId: ids[0]!,
    endpoints: ENDPOINTS,
    start,
    spanMs: 30 * DAY,
    statuses: "mixed",
    rooms: ROOMS,
  });
}

const pick = (n: number) => 1 + Math.floor(Math.random() * n);

async function benchTarget(target: Target, rows: number): Promise<void> {
  const { ctx } = target;
  const start = Date.now() - 30 * DAY;
  const generateStart = performance.now();
  await generate(ctx, start, rows);
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
    ["eventId", () => ({ eventId: `evt_${String(pick(rows)).padStart(26, "0")}`, limit: 50 })],
    ["roomId", () => ({ roomId: pick(ROOMS), limit: 50 })],
    ["messageId", () => ({ messageId: 12 * pick(rows / 12), limit: 50 })],
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
    `\n${target.name}: delivery search at ${rows.toLocaleString("en")} deliveries ` +
      `(generated in ${(generated / 1000).toFixed(1)} s): filtered search p95 ${pct(all, 95).toFixed(1)} ms ` +
      `(target < 50 ms) ${pct(all, 95) < 50 ? "met" : "MISSED"}`,
  );
  for (const line of lines) console.log(line);
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

export async function runDeliverySearchBench(rows = SEARCH_ROWS): Promise<void> {
  const targets: Array<() => Promise<Target>> = [sqliteTarget];
  const url = process.env.PARLEY_TEST_DATABASE_URL || process.env.DATABASE_URL;
  if (url) targets.push(() => postgresTarget(url));
  else console.log("(PostgreSQL skipped: set PARLEY_TEST_DATABASE_URL or DATABASE_URL)");
  for (const open of targets) {
    const target = await open();
    try {
      await benchTarget(target, rows);
    } finally {
      await target.cleanup();
    }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runDeliverySearchBench();
}
