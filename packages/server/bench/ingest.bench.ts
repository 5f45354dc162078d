// Throughput of POST /api/public/webhooks/ingest/{token} against the practical ceiling: a bare
// Fastify route that parses the same JSON and answers 200. Each server runs in a child process on
// loopback (autocannon keeps this process and the other core busy); the two are measured in
// alternating rounds so neither always gets the warmer machine, and medians are printed.
// Parley runs as shipped (edition enterprise, moderation on) with logging off, the webhook_ingest
// limit raised out of the way, and one enabled outbound endpoint subscribed to MESSAGE_CREATED, so
// every post also writes its delivery row in the same transaction. The dispatcher does not run.
// SQLite always (a file in a temp dir); PostgreSQL too when PARLEY_TEST_DATABASE_URL is set.
//
// On PostgreSQL a third side is the database's own limit for this work: a raw `pg` loop running
// the same room check + message + delivery insert as ONE prepared statement (a CTE over Parley's
// real tables, made by its migrations in a scratch schema), with the pool Parley opens (10
// connections) and as many requests in flight as autocannon keeps (--connections); no HTTP.
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
import { sql } from "kysely";
import pg from "pg";
import { createAppContext, type AppContext } from "../src/app-context.js";
import { buildApp } from "../src/app.js";
import { startRealtimeWork } from "../src/background-work.js";
import { loadConfig } from "../src/config/load-config.js";
import { openDatabase } from "../src/db/open-database.js";
import { newEventIdPrefix } from "../src/events/event-id.js";
import { createInboundWebhook } from "../src/webhooks/inbound/inbound-service.js";

// autocannon ships no types; this is the part of its API used here.
interface AutocannonResult {
  requests: { average: number };
  latency: { p99: number };
  non2xx: number;
  errors: number;
}
export const autocannon = createRequire(import.meta.url)("autocannon") as (options: {
  /** Several: the connections are spread over them in turn. */
  url: string | string[];
  method: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  duration: number;
}) => Promise<AutocannonResult>;

export const BODY = JSON.stringify({
  content:
    "Deploy finished: **api** v1.2.3 is live on `prod` ([run 4242](https://ci.example.com/runs/4242))",
});

export interface Ready {
  port: number;
  path: string;
}

export type Role = "bare" | "sqlite" | "postgres" | "rawpg";

/** Parley's PostgreSQL pool in this benchmark, and the raw loop's. */
const PG_POOL_SIZE = 10;

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

/**
 * An admin, a room, an inbound webhook posting into it (with `signingSecret`, when given, for the
 * signed senders), and one enabled outbound endpoint subscribed to MESSAGE_CREATED (the dispatcher
 * does not run: its rows stay queued).
 */
export async function createPostingFixtures(ctx: AppContext, options?: { signingSecret?: string }) {
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
  const hook = await createInboundWebhook(ctx, admin.id, {
    roomId: room.id,
    displayName: "CI",
    ...(options?.signingSecret ? { signingSecret: options.signingSecret } : {}),
  });
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

  return { token: hook.token, id: hook.id, roomId: room.id, adminId: admin.id };
}

/**
 * A Parley server process attached to a schema another process made, with its fixtures (see
 * scale-out.bench.ts): the schema, the master key its keys are wrapped with, and the ingest token.
 * Given to the child in PARLEY_BENCH_SHARED as JSON; that child neither creates nor drops anything.
 */
export interface SharedSchema {
  schema: string;
  masterKey: string;
  token: string;
}

async function serveParley(
  dialect: "sqlite" | "postgres",
): Promise<{ ready: Ready; close(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-"));
  const url = process.env.PARLEY_TEST_DATABASE_URL;
  const shared = process.env.PARLEY_BENCH_SHARED
    ? (JSON.parse(process.env.PARLEY_BENCH_SHARED) as SharedSchema)
    : undefined;
  const schema = shared?.schema ?? `bench_${crypto.randomBytes(4).toString("hex")}`;
  if (dialect === "postgres" && !shared) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.end();
  }
  const database =
    dialect === "postgres"
      ? openDatabase({ databaseUrl: url, pgSchema: schema, poolSize: PG_POOL_SIZE })
      : openDatabase({ sqlitePath: path.join(dataDir, "parley.db") });
  const config = loadConfig(
    {},
    {
      dataDir,
      logLevel: "silent",
      rateLimitWebhookIngest: "1000000000/1m",
      // PostgreSQL keeps generated keys in the database, wrapped by a master key from outside.
      masterKey: shared?.masterKey ?? crypto.randomBytes(32).toString("hex"),
    },
  );
  const ctx = await createAppContext(config, { database });
  // PARLEY_BENCH_WITHOUT_SEARCH=1: posting as it would be without the search index (what the index
  // costs a post, this build against itself): SQLite's indexer never runs; PostgreSQL's messages
  // lose the stored search vector and its GIN index (dropped with the column).
  if (process.env.PARLEY_BENCH_WITHOUT_SEARCH === "1") {
    await ctx.searchIndexer.stop();
    if (dialect === "postgres" && !shared) {
      await sql`alter table "messages" drop column "search_vector"`.execute(ctx.db);
    }
  }
  const app = await buildApp(ctx, { logger: false });
  // As the server runs it: on PostgreSQL, every emitting commit also sends the stream's NOTIFY.
  const realtime = await startRealtimeWork(ctx, app.stream, app.log);
  await app.listen({ port: 0, host: "127.0.0.1" });

  const hook = shared ?? (await createPostingFixtures(ctx));

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
      await Promise.all(realtime.map((work) => work.stop()));
      await database.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (dialect === "postgres" && !shared) {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await client.end();
      }
    },
  };
}

/**
 * The PostgreSQL limit for a post: the room check, the message and its delivery row for the
 * enabled, subscribed endpoint (body built around the endpoint id, as Parley's fan-out does) in
 * ONE statement, prepared once per connection (a named statement).
 */
const RAW_POST_SQL = `
  WITH m AS (
    INSERT INTO messages (room_id, sender_user_id, inbound_webhook_id, sender_display_name,
      sender_avatar_url, content, content_format, moderation_status, created_at)
    SELECT r.id, NULL, $2::bigint, $3::text, NULL, $4::text, 'markdown', 'none', $5::bigint
    FROM rooms r
    WHERE r.id = $1::bigint AND r.deleted_at IS NULL
    RETURNING id, room_id, created_at
  )
  INSERT INTO webhook_deliveries (webhook_id, event, body, status, attempts, next_attempt_at,
    locked_until, locked_by, last_response_status, created_at, updated_at, event_id, room_id,
    message_id)
  SELECT w.id, 'MESSAGE_CREATED',
    $6::text || w.id::text || ',"data":{"roomId":' || m.room_id::text || ',"messageId":'
      || m.id::text || ',"senderId":null,"timestamp":"' || $7::text || '","inboundWebhookId":'
      || $2::text || '}}',
    'PENDING', 0, m.created_at, NULL, NULL, NULL, m.created_at, m.created_at,
    $8::text || lpad(w.id::text, 10, '0'), m.room_id, m.id
  FROM m CROSS JOIN webhooks w
  WHERE w.enabled = 1 AND strpos(w.events, '"MESSAGE_CREATED"') > 0`;

interface RawLoop {
  ready: Ready;
  run(seconds: number, connections: number): Promise<Run>;
  close(): Promise<void>;
}

/** Parley's tables (its migrations, in a scratch schema) and a raw pool: no HTTP, no Kysely. */
async function serveRawPg(): Promise<RawLoop> {
  const url = process.env.PARLEY_TEST_DATABASE_URL!;
  const schema = `bench_raw_${crypto.randomBytes(4).toString("hex")}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-"));
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const database = openDatabase({ databaseUrl: url, pgSchema: schema, poolSize: 2 });
  const config = loadConfig(
    {},
    { dataDir, logLevel: "silent", masterKey: crypto.randomBytes(32).toString("hex") },
  );
  const ctx = await createAppContext(config, { database });
  const hook = await createPostingFixtures(ctx);
  await database.close();
  const pool = new pg.Pool({
    connectionString: url,
    max: PG_POOL_SIZE,
    options: `-c search_path=${schema}`,
  });
  const body = JSON.parse(BODY) as { content: string };
  const post = () => {
    const now = Date.now();
    const head = JSON.stringify({
      event: "MESSAGE_CREATED",
      timestamp: new Date(now).toISOString(),
    });
    return pool.query({
      name: "parley_post",
      text: RAW_POST_SQL,
      values: [
        hook.roomId,
        hook.id,
        "CI",
        body.content,
        now,
        `${head.slice(0, -1)},"webhookId":`,
        new Date(now).toISOString(),
        `evt_${newEventIdPrefix(now)}`,
      ],
    });
  };
  return {
    ready: { port: 0, path: "" },
    async run(seconds, connections) {
      const times: number[] = [];
      let errors = 0;
      const end = performance.now() + seconds * 1000;
      const start = performance.now();
      await Promise.all(
        Array.from({ length: connections }, async () => {
          while (performance.now() < end) {
            const t = performance.now();
            try {
              await post();
              times.push(performance.now() - t);
            } catch {
              errors++;
            }
          }
        }),
      );
      times.sort((a, b) => a - b);
      return {
        rps: (times.length / (performance.now() - start)) * 1000,
        p99: Math.round(times[Math.floor(times.length * 0.99)] ?? NaN),
        non2xx: 0,
        errors,
      };
    },
    async close() {
      const { rows } = await pool.query<{ messages: string; deliveries: string }>(
        "SELECT (SELECT count(*) FROM messages) AS messages, (SELECT count(*) FROM webhook_deliveries) AS deliveries",
      );
      process.send?.({
        stored: { messages: Number(rows[0]?.messages), deliveries: Number(rows[0]?.deliveries) },
      });
      await pool.end();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function child(role: Role): Promise<void> {
  const raw = role === "rawpg" ? await serveRawPg() : undefined;
  const server =
    raw ?? (role === "bare" ? await serveBare() : await serveParley(role as "sqlite" | "postgres"));
  process.send!({ ready: server.ready });
  process.on("message", (message: unknown) => {
    if (message === "close") void server.close().then(() => process.exit(0));
    const run = (message as { run?: { seconds: number; connections: number } }).run;
    if (run && raw) {
      void raw.run(run.seconds, run.connections).then((result) => process.send!({ result }));
    }
  });
}

// ---------------------------------------------------------------- parent side: the measurement

export interface Run {
  rps: number;
  p99: number;
  non2xx: number;
  errors: number;
}

export interface Server {
  process: ChildProcess;
  ready: Ready;
  stored: Promise<unknown>;
  /** The raw loop's next result (rawpg only). */
  result(): Promise<Run>;
}

/** Forks one server; `env` replaces the child's environment (a shared schema, a tagged URL). */
export function start(role: Role, env?: NodeJS.ProcessEnv): Promise<Server> {
  // PARLEY_BENCH_CPU_PROF=<dir>: each server writes a V8 CPU profile there when it exits.
  const profileDir = process.env.PARLEY_BENCH_CPU_PROF;
  const execArgv = profileDir
    ? [...process.execArgv, "--cpu-prof", "--cpu-prof-dir", profileDir]
    : process.execArgv;
  const proc = fork(fileURLToPath(import.meta.url), ["--serve", role], {
    stdio: "inherit",
    env,
    execArgv,
  });
  let storedResolve: (value: unknown) => void = () => undefined;
  const stored = new Promise((resolve) => (storedResolve = resolve));
  let resultResolve: (run: Run) => void = () => undefined;
  const result = () => new Promise<Run>((resolve) => (resultResolve = resolve));
  return new Promise((resolve, reject) => {
    proc.on("message", (message: { ready?: Ready; stored?: unknown; result?: Run }) => {
      if (message.ready) resolve({ process: proc, ready: message.ready, stored, result });
      if (message.stored) storedResolve(message.stored);
      if (message.result) resultResolve(message.result);
    });
    proc.once("exit", (code) => {
      storedResolve(undefined);
      reject(new Error(`${role} server exited with ${code}`));
    });
  });
}

export async function stop(server: { process: ChildProcess }): Promise<void> {
  await new Promise<void>((resolve) => {
    server.process.once("exit", () => resolve());
    server.process.send("close");
  });
}

async function load(server: Server, seconds: number, connections: number): Promise<Run> {
  if (!server.ready.path) {
    // The raw loop runs in its own process; ask it and wait for its count.
    const result = server.result();
    server.process.send({ run: { seconds, connections } });
    return result;
  }
  return loadUrls(
    [`http://127.0.0.1:${server.ready.port}${server.ready.path}`],
    seconds,
    connections,
  );
}

/** autocannon posting the ingest body: `connections` spread evenly over `urls`, one histogram. */
export async function loadUrls(urls: string[], seconds: number, connections: number): Promise<Run> {
  const result = await autocannon({
    url: urls,
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

type Side = "bare" | "parley" | "raw";

async function compare(dialect: "sqlite" | "postgres", options: IngestBenchOptions) {
  const servers: Partial<Record<Side, Server>> = {};
  const runs: Record<Side, Run[]> = { bare: [], parley: [], raw: [] };
  // The bare route is the HTTP limit on both; on PostgreSQL the raw loop is the database's.
  const sides: Side[] = dialect === "postgres" ? ["parley", "bare", "raw"] : ["parley", "bare"];
  try {
    for (const side of sides) {
      servers[side] = await start(side === "bare" ? "bare" : side === "raw" ? "rawpg" : dialect);
    }
    // A short warm-up of each (JIT, SQLite page cache, pool connections), not counted.
    for (const side of sides) await load(servers[side]!, 2, options.connections);
    for (let round = 0; round < options.rounds; round++) {
      // Each round starts with a different side, so none always gets the warmer machine.
      const order = sides.map((_, i) => sides[(i + round) % sides.length]!);
      for (const side of order) {
        const run = await load(servers[side]!, options.duration, options.connections);
        runs[side].push(run);
        console.log(
          `  ${dialect} round ${round + 1} ${side.padEnd(6)} ${run.rps.toFixed(0).padStart(7)} req/s  p99 ${String(run.p99).padStart(4)} ms` +
            (run.non2xx || run.errors ? `  (${run.non2xx} non-2xx, ${run.errors} errors!)` : ""),
        );
      }
    }
  } finally {
    for (const server of Object.values(servers)) await stop(server);
  }
  const stored = (await servers.parley?.stored) as
    { messages: number; deliveries: number } | undefined;
  const rawStored = (await servers.raw?.stored) as
    { messages: number; deliveries: number } | undefined;
  const parleyRps = median(runs.parley.map((r) => r.rps));
  const bareRps = median(runs.bare.map((r) => r.rps));
  const rawRps = runs.raw.length ? median(runs.raw.map((r) => r.rps)) : undefined;
  return {
    dialect,
    parleyRps,
    parleyP99: median(runs.parley.map((r) => r.p99)),
    bareRps,
    bareP99: median(runs.bare.map((r) => r.p99)),
    rawRps,
    rawP99: runs.raw.length ? median(runs.raw.map((r) => r.p99)) : undefined,
    ratio: parleyRps / bareRps,
    failures: runs.parley.reduce((n, r) => n + r.non2xx + r.errors, 0),
    rawFailures: runs.raw.reduce((n, r) => n + r.errors, 0),
    stored,
    rawStored,
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
    if (r.rawRps !== undefined) {
      const share = r.parleyRps / r.rawRps;
      console.log(
        `  ${`raw pg loop, 1 statement`.padEnd(28)} ${r.rawRps.toFixed(0).padStart(7)}  ${String(r.rawP99).padStart(6)}`,
      );
      console.log(
        `  Parley's PostgreSQL ingest = ${(share * 100).toFixed(0)}% of the raw pg loop (target >= 50%) ${share >= 0.5 ? "met" : "MISSED"}` +
          (r.rawStored
            ? `; the loop stored ${r.rawStored.messages} messages, ${r.rawStored.deliveries} deliveries`
            : "") +
          (r.rawFailures ? `; ${r.rawFailures} FAILED statements` : ""),
      );
    }
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
