// Throughput of POST /api/public/webhooks/ingest/{token} against the practical ceiling: a bare
// Fastify route that parses the same JSON and answers 200. Each server runs in a child process on
// loopback (autocannon keeps this process and the other core busy); the two are measured in
// alternating rounds so neither always gets the warmer machine, and medians are printed.
// Parley runs as shipped (edition enterprise, moderation on) with logging off, the webhook_ingest
// limit raised out of the way, and one enabled outbound endpoint subscribed to MESSAGE_CREATED, so
// every post also writes its delivery row in the same transaction. The dispatcher does not run.
// SQLite always (a file in a temp dir); PostgreSQL too when PARLEY_TEST_DATABASE_URL is set.
//
// Run: npx tsx packages/server/bench/ingest.bench.ts [--duration 10] [--connections 50] [--rounds 3]
// (also part of `npm run bench -w @parley/server`, through bench/run-all.ts)
import { fork, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import Fastify from "fastify";
import pg from "pg";
import { createAppContext } from "../src/app-context.js";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config/load-config.js";
import { openDatabase } from "../src/db/open-database.js";
import { createInboundWebhook } from "../src/webhooks/inbound/inbound-service.js";

// autocannon ships no types; this is the part of its API used here.
interface AutocannonResult {
  requests: { average: number };
  latency: { p99: number };
  non2xx: number;
  errors: number;
}
const autocannon = createRequire(import.meta.url)("autocannon") as (options: {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  duration: number;
}) => Promise<AutocannonResult>;

const BODY = JSON.stringify({
  content:
    "Deploy finished: **api** v1.2.3 is live on `prod` ([run 4242](https://ci.example.com/runs/4242))",
});

interface Ready {
  port: number;
  path: string;
}

type Role = "bare" | "sqlite" | "postgres";

// ---------------------------------------------------------------- child side: one server

async function serveBare(): Promise<{ ready: Ready; close(): Promise<void> }> {
  const app = Fastify({ logger: false });
  app.post("/api/public/webhooks/ingest/:token", async (request) => {
    const body = request.body as { content?: unknown };
    if (typeof body?.content !== "string") throw new Error("no content");
    return { messageId: 1, timestamp: new Date().toISOString() };
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = app.server.address() as { port: number };
  return { ready: { port, path: "/api/public/webhooks/ingest/bare" }, close: () => app.close() };
}

async function serveParley(
  dialect: "sqlite" | "postgres",
): Promise<{ ready: Ready; close(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-"));
  const url = process.env.PARLEY_TEST_DATABASE_URL;
  const schema = `bench_${crypto.randomBytes(4).toString("hex")}`;
  if (dialect === "postgres") {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.end();
  }
  const database =
    dialect === "postgres"
      ? openDatabase({ databaseUrl: url, pgSchema: schema, poolSize: 10 })
      : openDatabase({ sqlitePath: path.join(dataDir, "parley.db") });
  const config = loadConfig(
    {},
    {
      dataDir,
      logLevel: "silent",
      rateLimitWebhookIngest: "1000000000/1m",
      // PostgreSQL keeps generated keys in the database, wrapped by a master key from outside.
      masterKey: crypto.randomBytes(32).toString("hex"),
    },
  );
  const ctx = await createAppContext(config, { database });
  const app = await buildApp(ctx, { logger: false });
  await app.listen({ port: 0, host: "127.0.0.1" });

  const now = Date.now();
  const admin = await ctx.db
    .insertInto("users")
    .values({
      username: "admin",
      display_name: "Admin",
      role: "admin",
      status: "active",
      created_at: now,
      updated_at: now,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  const room = await ctx.db
    .insertInto("rooms")
    .values({
      name: "deploys",
      kind: "room",
      created_by: admin.id,
      deleted_at: null,
      created_at: now,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  const hook = await createInboundWebhook(ctx, admin.id, { roomId: room.id, displayName: "CI" });
  await ctx.db
    .insertInto("webhooks")
    .values({
      name: "bench receiver",
      url: "https://receiver.example.com/hook",
      secret_ciphertext: "not-used-the-dispatcher-does-not-run",
      events: JSON.stringify(["MESSAGE_CREATED"]),
      enabled: 1,
      created_at: now,
      updated_at: now,
    })
    .execute();

  const { port } = app.server.address() as { port: number };
  return {
    ready: { port, path: `/api/public/webhooks/ingest/${hook.token}` },
    async close() {
      const messages = await ctx.db
        .selectFrom("messages")
        .select(ctx.db.fn.countAll<number>().as("n"))
        .executeTakeFirst();
      const deliveries = await ctx.db
        .selectFrom("webhook_deliveries")
        .select(ctx.db.fn.countAll<number>().as("n"))
        .executeTakeFirst();
      process.send?.({
        stored: { messages: Number(messages?.n), deliveries: Number(deliveries?.n) },
      });
      await app.close();
      await database.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (dialect === "postgres") {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await client.end();
      }
    },
  };
}

async function child(role: Role): Promise<void> {
  const server = role === "bare" ? await serveBare() : await serveParley(role);
  process.send!({ ready: server.ready });
  process.on("message", (message: unknown) => {
    if (message === "close") void server.close().then(() => process.exit(0));
  });
}

// ---------------------------------------------------------------- parent side: the measurement

interface Run {
  rps: number;
  p99: number;
  non2xx: number;
  errors: number;
}

function start(
  role: Role,
): Promise<{ process: ChildProcess; ready: Ready; stored: Promise<unknown> }> {
  const proc = fork(fileURLToPath(import.meta.url), ["--serve", role], { stdio: "inherit" });
  let storedResolve: (value: unknown) => void = () => undefined;
  const stored = new Promise((resolve) => (storedResolve = resolve));
  return new Promise((resolve, reject) => {
    proc.on("message", (message: { ready?: Ready; stored?: unknown }) => {
      if (message.ready) resolve({ process: proc, ready: message.ready, stored });
      if (message.stored) storedResolve(message.stored);
    });
    proc.once("exit", (code) => {
      storedResolve(undefined);
      reject(new Error(`${role} server exited with ${code}`));
    });
  });
}

async function stop(server: { process: ChildProcess }): Promise<void> {
  await new Promise<void>((resolve) => {
    server.process.once("exit", () => resolve());
    server.process.send("close");
  });
}

async function load(ready: Ready, seconds: number, connections: number): Promise<Run> {
  const result = await autocannon({
    url: `http://127.0.0.1:${ready.port}${ready.path}`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: BODY,
    connections,
    duration: seconds,
  });
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function compare(dialect: "sqlite" | "postgres", options: IngestBenchOptions) {
  const bare = await start("bare");
  const parley = await start(dialect);
  const runs: Record<"bare" | "parley", Run[]> = { bare: [], parley: [] };
  try {
    // A short warm-up of each (JIT, SQLite page cache, pool connections), not counted.
    await load(bare.ready, 2, options.connections);
    await load(parley.ready, 2, options.connections);
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? (["parley", "bare"] as const) : (["bare", "parley"] as const);
      for (const side of order) {
        const run = await load(
          side === "bare" ? bare.ready : parley.ready,
          options.duration,
          options.connections,
        );
        runs[side].push(run);
        console.log(
          `  ${dialect} round ${round + 1} ${side.padEnd(6)} ${run.rps.toFixed(0).padStart(7)} req/s  p99 ${String(run.p99).padStart(4)} ms` +
            (run.non2xx || run.errors ? `  (${run.non2xx} non-2xx, ${run.errors} errors!)` : ""),
        );
      }
    }
  } finally {
    await stop(bare);
    await stop(parley);
  }
  const stored = (await parley.stored) as { messages: number; deliveries: number } | undefined;
  const parleyRps = median(runs.parley.map((r) => r.rps));
  const bareRps = median(runs.bare.map((r) => r.rps));
  return {
    dialect,
    parleyRps,
    parleyP99: median(runs.parley.map((r) => r.p99)),
    bareRps,
    bareP99: median(runs.bare.map((r) => r.p99)),
    ratio: parleyRps / bareRps,
    failures: runs.parley.reduce((n, r) => n + r.non2xx + r.errors, 0),
    stored,
  };
}

export interface IngestBenchOptions {
  /** Seconds per measured run. */
  duration: number;
  connections: number;
  /** Measured runs of each side, alternating which goes first. */
  rounds: number;
}

/** Runs the comparison on SQLite (and PostgreSQL when PARLEY_TEST_DATABASE_URL is set) and prints it. */
export async function runIngestBench(
  options: IngestBenchOptions = { duration: 10, connections: 50, rounds: 3 },
): Promise<void> {
  const dialects: Array<"sqlite" | "postgres"> = process.env.PARLEY_TEST_DATABASE_URL
    ? ["sqlite", "postgres"]
    : ["sqlite"];
  console.log(
    `ingest benchmark: ${options.rounds} rounds x ${options.duration} s, ${options.connections} connections, ${os.cpus().length} CPUs, Node ${process.version}`,
  );
  if (dialects.length === 1) {
    console.log("  (PostgreSQL skipped: set PARLEY_TEST_DATABASE_URL to include it)");
  }
  const results = [];
  for (const dialect of dialects) results.push(await compare(dialect, options));

  console.log("\nmedians                        req/s    p99 ms");
  for (const r of results) {
    console.log(
      `  ${`Parley ingest (${r.dialect})`.padEnd(28)} ${r.parleyRps.toFixed(0).padStart(7)}  ${String(r.parleyP99).padStart(6)}`,
    );
    console.log(
      `  ${"bare Fastify route".padEnd(28)} ${r.bareRps.toFixed(0).padStart(7)}  ${String(r.bareP99).padStart(6)}`,
    );
    console.log(
      `  ratio ${(r.ratio * 100).toFixed(0)}% of bare; targets: >= 5000 req/s ${r.parleyRps >= 5000 ? "met" : "MISSED"}, >= 40% ${r.ratio >= 0.4 ? "met" : "MISSED"}` +
        (r.stored
          ? `; stored ${r.stored.messages} messages, ${r.stored.deliveries} deliveries`
          : "") +
        (r.failures ? `; ${r.failures} FAILED requests` : ""),
    );
  }
}

// Run directly: the measurement, or (with --serve, in a forked child) one of the servers.
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { values } = parseArgs({
    options: {
      serve: { type: "string" },
      duration: { type: "string", default: "10" },
      connections: { type: "string", default: "50" },
      rounds: { type: "string", default: "3" },
    },
  });
  if (values.serve) {
    await child(values.serve as Role);
  } else {
    await runIngestBench({
      duration: Number(values.duration),
      connections: Number(values.connections),
      rounds: Number(values.rounds),
    });
  }
}
