// Inbound from the world, side by side in one run on each database (SQLite always; PostgreSQL too
// when PARLEY_TEST_DATABASE_URL is set), through the real app (app.inject: routing, parsing,
// rate limit, token lookup, content rules, DLP, the post; no sockets, so what is compared is
// Parley's own work, not the loopback):
//
// - plain ingest against ingest with a new Idempotency-Key on every request (the claim row
//   inserted, then completed with the answer): at least 85% of plain;
// - /github with a signed 20 KB push (X-Hub-Signature-256 checked with the webhook's signing
//   secret, a new X-GitHub-Delivery each, the push formatted) against plain ingest of a body of the
//   same size (content plus an ignored field): at least 70%;
// - ingest with a key once the idempotency table holds 1,000,000 keys (seeded with bulk SQL)
//   against the same before seeding: within 10%. Plain ingest is measured beside it in both
//   phases, and the ratio keyed/plain is compared too, so drift of the machine shows.
//
// The sides alternate in rounds (neither always gets the warmer machine); medians are printed.
// Run: npx tsx packages/server/bench/inbound-from-the-world.bench.ts [--quick]
// (also part of `npm run bench -w @parley/server` as `inbound`, through bench/run-all.ts)
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { sign } from "@octokit/webhooks-methods";
import { sql } from "kysely";
import pg from "pg";
import { createAppContext, type AppContext } from "../src/app-context.js";
import { buildApp, type ParleyApp } from "../src/app.js";
import { loadConfig } from "../src/config/load-config.js";
import { openDatabase } from "../src/db/open-database.js";
import { IDEMPOTENCY_TTL_MS } from "../src/webhooks/inbound/idempotency/run-idempotent.js";
import { createInboundWebhook } from "../src/webhooks/inbound/inbound-service.js";
import { benchDatabaseUrl, median } from "./bench-targets.js";

export interface InboundBenchOptions {
  /** Seconds of each measured side in each round. */
  seconds: number;
  rounds: number;
  /** Requests in flight at once. */
  concurrency: number;
  /** Keys seeded for the large-table phase. */
  keys: number;
}

export function inboundOptionsFrom(flags: { quick?: boolean }): InboundBenchOptions {
  return flags.quick
    ? { seconds: 1.5, rounds: 2, concurrency: 50, keys: 1_000_000 }
    : { seconds: 3, rounds: 3, concurrency: 50, keys: 1_000_000 };
}

const SECRET = "bench-github-secret-0123456789";
const PUSH_BYTES = 20 * 1024;
const CONTENT =
  "Deploy finished: **api** v1.2.3 is live on `prod` ([run 4242](https://ci.example.com/runs/4242))";

interface Target {
  name: "SQLite" | "PostgreSQL";
  ctx: AppContext;
  app: ParleyApp;
  cleanup(): Promise<void>;
}

function config(dataDir: string, databaseUrl: string | undefined) {
  return loadConfig(
    {},
    {
      dataDir,
      databaseUrl,
      logLevel: "silent",
      masterKey: crypto.randomBytes(32).toString("hex"),
      // Out of the way: the limiter's cost is counted, its refusals are not.
      rateLimitWebhookIngest: "1000000000/1m",
    },
  );
}

async function open(name: Target["name"]): Promise<Target> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-inbound-"));
  let dropSchema = async () => {};
  let ctx: AppContext;
  if (name === "SQLite") {
    ctx = await createAppContext(config(dataDir, undefined));
  } else {
    const url = benchDatabaseUrl()!;
    const schema = `bench_${crypto.randomBytes(4).toString("hex")}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    dropSchema = async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    };
    ctx = await createAppContext(config(dataDir, url), {
      database: openDatabase({ databaseUrl: url, pgSchema: schema }),
    });
  }
  const app = await buildApp(ctx, { logger: false });
  await app.ready();
  return {
    name,
    ctx,
    app,
    async cleanup() {
      await app.close();
      await ctx.database.close();
      await dropSchema();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** An admin, a room and an inbound webhook (with the GitHub signing secret); answers its token. */
async function createHook(ctx: AppContext): Promise<{ id: number; token: string }> {
  const now = Date.now();
  const admin = await ctx.db
    .insertInto("users")
    .values({
      username: `bench-${crypto.randomBytes(3).toString("hex")}`,
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
    signingSecret: SECRET,
  });
  return { id: hook.id, token: hook.token };
}

/** A real GitHub push (test/fixtures/github/push.json) grown to about 20 KB with more commits. */
function pushPayload(): string {
  const fixture = path.resolve(
    path.dirname(fileURLToPath(import.meta.url)),
    "../test/fixtures/github/push.json",
  );
  const push = JSON.parse(fs.readFileSync(fixture, "utf8")) as { commits: unknown[] };
  const commit = push.commits[0] as Record<string, unknown>;
  const commits: unknown[] = [];
  for (let i = 0; JSON.stringify({ ...push, commits }).length < PUSH_BYTES; i++) {
    commits.push({ ...commit, id: crypto.createHash("sha1").update(String(i)).digest("hex") });
  }
  return JSON.stringify({ ...push, commits });
}

/** The plain ingest body padded (an ignored field) to `bytes`. */
function paddedBody(bytes: number): string {
  const bare = JSON.stringify({ content: CONTENT, padding: "" });
  return JSON.stringify({ content: CONTENT, padding: "x".repeat(bytes - bare.length) });
}

type Send = (i: number) => Promise<number>;

/** Requests per second of `send` with `concurrency` in flight for `seconds`; non-2xx fail it. */
async function measure(send: Send, seconds: number, concurrency: number): Promise<number> {
  let done = 0;
  let failed = 0;
  let counter = 0;
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const status = await send(counter++);
        if (status < 200 || status >= 300) failed++;
        done++;
      }
    }),
  );
  if (failed > 0) throw new Error(`${failed} of ${done} requests were not 2xx`);
  return done / ((performance.now() - started) / 1000);
}

/** Each side measured once per round, in turn; the median of each. */
async function sideBySide(
  sides: Record<string, Send>,
  options: InboundBenchOptions,
): Promise<Record<string, number>> {
  const runs: Record<string, number[]> = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
  for (let round = 0; round < options.rounds; round++) {
    for (const [name, send] of Object.entries(sides))
      runs[name]!.push(await measure(send, options.seconds, options.concurrency));
  }
  return Object.fromEntries(Object.entries(runs).map(([name, values]) => [name, median(values)]));
}

/** `count` completed keys of another webhook, written with one INSERT ... SELECT. */
async function seedKeys(target: Target, webhookId: number, count: number): Promise<void> {
  const now = Date.now();
  const expires = now + IDEMPOTENCY_TTL_MS;
  const values = sql`${webhookId}, ${"k"} || n, ${"0".repeat(64)}, ${now}, ${expires} - n, 200,
    '{"content-type":"application/json; charset=utf-8"}', '{"messageId":1,"timestamp":"2026-01-01T00:00:00.000Z"}'`;
  const columns = sql`("inbound_webhook_id", "key_hash", "body_hash", "claimed_at", "expires_at",
    "status", "answer_headers", "answer_body")`;
  if (target.name === "SQLite") {
    await sql`with recursive seq(n) as (select 1 union all select n + 1 from seq where n < ${count})
      insert into "inbound_idempotency_keys" ${columns} select ${values} from seq`.execute(
      target.ctx.db,
    );
    await sql`analyze`.execute(target.ctx.db);
    // The seed went through the write-ahead log in one go; a table that grew over a day would
    // have been checkpointed all along, so start from there.
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(target.ctx.db);
  } else {
    await sql`insert into "inbound_idempotency_keys" ${columns}
      select ${values} from generate_series(1, ${count}::bigint) as n`.execute(target.ctx.db);
    await sql`analyze "inbound_idempotency_keys"`.execute(target.ctx.db);
  }
}

const pct = (a: number, b: number) => `${((a / b) * 100).toFixed(0)}%`;

async function runOn(name: Target["name"], options: InboundBenchOptions): Promise<void> {
  const target = await open(name);
  try {
    const hook = await createHook(target.ctx);
    const other = await createHook(target.ctx);
    const url = `/api/public/webhooks/ingest/${hook.token}`;
    const run = crypto.randomBytes(4).toString("hex");
    const body = JSON.stringify({ content: CONTENT });
    const push = pushPayload();
    const signature = await sign(SECRET, push);
    const padded = paddedBody(Buffer.byteLength(push));
    const json = { "content-type": "application/json" };
    const inject = async (u: string, payload: string, headers: Record<string, string>) =>
      (await target.app.inject({ method: "POST", url: u, headers, payload })).statusCode;

    const plain: Send = () => inject(url, body, json);
    const keyed =
      (phase: string): Send =>
      (i) =>
        inject(url, body, { ...json, "idempotency-key": `${run}-${phase}-${i}` });
    const github: Send = (i) =>
      inject(`${url}/github`, push, {
        ...json,
        "x-github-event": "push",
        "x-github-delivery": `${run}-${i}`,
        "x-hub-signature-256": signature,
      });
    const plain20k: Send = () => inject(url, padded, json);

    // Warm-up: JIT, prepared statements, caches.
    await measure(plain, 1, options.concurrency);
    await measure(keyed("warm"), 1, options.concurrency);
    await measure(github, 1, options.concurrency);

    const first = await sideBySide({ plain, keyed: keyed("a"), plain20k, github }, options);
    const seedStarted = performance.now();
    await seedKeys(target, other.id, options.keys);
    const seeded = (performance.now() - seedStarted) / 1000;
    await measure(keyed("warm-large"), 1, options.concurrency);
    const large = await sideBySide({ plain, keyed: keyed("b") }, options);

    const keyedShare = first.keyed! / first.plain!;
    const githubShare = first.github! / first.plain20k!;
    const largeShare = large.keyed! / first.keyed!;
    const drift = large.keyed! / large.plain! / keyedShare;
    const r = (n: number) => Math.round(n).toLocaleString("en");
    console.log(
      `${name.padEnd(10)} plain ingest ${r(first.plain!)}/s; with an Idempotency-Key ${r(first.keyed!)}/s ` +
        `= ${pct(first.keyed!, first.plain!)} of plain (at least 85%)${keyedShare >= 0.85 ? "" : ": UNDER"}`,
    );
    console.log(
      `${name.padEnd(10)} plain ingest of ${Buffer.byteLength(padded)} bytes ${r(first.plain20k!)}/s; /github signed ` +
        `push of ${Buffer.byteLength(push)} bytes ${r(first.github!)}/s = ${pct(first.github!, first.plain20k!)} ` +
        `(at least 70%)${githubShare >= 0.7 ? "" : ": UNDER"}`,
    );
    console.log(
      `${name.padEnd(10)} ${options.keys.toLocaleString("en")} keys seeded in ${seeded.toFixed(1)} s: with a key ` +
        `${r(large.keyed!)}/s = ${pct(large.keyed!, first.keyed!)} of the empty table ` +
        `(keyed/plain ${pct(large.keyed!, large.plain!)} against ${pct(first.keyed!, first.plain!)} before: ` +
        `${pct(drift, 1)}) (within 10%)${Math.abs(1 - largeShare) <= 0.1 || Math.abs(1 - drift) <= 0.1 ? "" : ": OVER"}`,
    );
  } finally {
    await target.cleanup();
  }
}

export async function runInboundBench(options: InboundBenchOptions): Promise<void> {
  const names: Target["name"][] = benchDatabaseUrl() ? ["SQLite", "PostgreSQL"] : ["SQLite"];
  if (names.length === 1)
    console.log("(PostgreSQL skipped: set PARLEY_TEST_DATABASE_URL or DATABASE_URL)");
  for (const name of names) await runOn(name, options);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { quick: { type: "boolean" } } });
  await runInboundBench(inboundOptionsFrom(values));
}
