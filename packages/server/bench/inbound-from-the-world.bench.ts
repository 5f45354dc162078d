// Inbound from the world, side by side in one run on each database (SQLite always; PostgreSQL too
// when PARLEY_TEST_DATABASE_URL is set), through the real app (app.inject: routing, parsing,
// rate limit, token lookup, content rules, DLP, moderation, the post; no sockets, so what is
// compared is Parley's own work, not the loopback), with the fixtures of ingest.bench.ts (one
// outbound endpoint subscribed: every post also queues its delivery):
//
// - plain ingest against ingest with a new Idempotency-Key on every request (the key claimed,
//   with the answer it keeps, in the post's own unit of work): at least 85% of plain;
// - /github with a signed 20 KB push (X-Hub-Signature-256 checked with the webhook's signing
//   secret, a new X-GitHub-Delivery each, the push formatted) against plain ingest of a body of the
//   same size (content plus an ignored field): at least 70%; and, for what /github adds of its
//   own, against plain ingest of the same size posting the same message;
// - ingest with a key once the idempotency table holds 1,000,000 keys (seeded with bulk SQL)
//   against the same before seeding: within 10%. Plain ingest is measured beside it in both
//   phases, and the ratio keyed/plain is compared, so what moved the machine meanwhile cancels.
//
// Each comparison gives two figures: by rate, and by CPU per request (this process's, plus on
// PostgreSQL that of the backends serving its pool): the share the rate would have on a machine
// with nothing else running. The sides alternate in rounds, the order reversed every other round;
// each figure is the median of the rounds' own ratios. On a shared machine prefer many short
// rounds: --rounds 10 --seconds 1.
// Run: npx tsx packages/server/bench/inbound-from-the-world.bench.ts [--quick] [--rounds N]
//        [--seconds S] [--keys N (0: no large-table phase)] [--only sqlite|postgres]
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
import { githubMessage } from "../src/webhooks/inbound/senders/github-message.js";
import { benchDatabaseUrl, median } from "./bench-targets.js";
import { processCpuMicros, taggedUrl } from "./cpu-accounting.js";
import { createPostingFixtures } from "./ingest.bench.js";

export interface InboundBenchOptions {
  /** Seconds of each measured side in each round. */
  seconds: number;
  rounds: number;
  /** Requests in flight at once. */
  concurrency: number;
  /** Keys seeded for the large-table phase (0: no large-table phase). */
  keys: number;
}

export function inboundOptionsFrom(flags: {
  quick?: boolean;
  rounds?: number;
  seconds?: number;
  keys?: number;
}): InboundBenchOptions {
  const base = flags.quick
    ? { seconds: 1.5, rounds: 2, concurrency: 50, keys: 1_000_000 }
    : { seconds: 3, rounds: 3, concurrency: 50, keys: 1_000_000 };
  return {
    ...base,
    ...(flags.rounds !== undefined ? { rounds: flags.rounds } : {}),
    ...(flags.seconds !== undefined ? { seconds: flags.seconds } : {}),
    ...(flags.keys !== undefined ? { keys: flags.keys } : {}),
  };
}

/** PostgreSQL's backends serving the benchmark's pool carry this application_name. */
const TAG = "parley_bench_inbound";

const SECRET = "bench-github-secret-0123456789";
const PUSH_BYTES = 20 * 1024;
const CONTENT =
  "Deploy finished: **api** v1.2.3 is live on `prod` ([run 4242](https://ci.example.com/runs/4242))";

interface Target {
  name: "SQLite" | "PostgreSQL";
  ctx: AppContext;
  app: ParleyApp;
  /** PostgreSQL: a connection of its own, to read its backends' CPU time. */
  admin?: pg.Client;
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
  let admin: pg.Client | undefined;
  if (name === "SQLite") {
    ctx = await createAppContext(config(dataDir, undefined));
  } else {
    const url = benchDatabaseUrl()!;
    const schema = `bench_${crypto.randomBytes(4).toString("hex")}`;
    const client = (admin = new pg.Client({ connectionString: url }));
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
    dropSchema = async () => {
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    };
    ctx = await createAppContext(config(dataDir, url), {
      database: openDatabase({ databaseUrl: taggedUrl(url, TAG), pgSchema: schema }),
    });
  }
  const app = await buildApp(ctx, { logger: false });
  await app.ready();
  return {
    name,
    ctx,
    app,
    ...(admin ? { admin } : {}),
    async cleanup() {
      await app.close();
      await ctx.database.close();
      await dropSchema();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
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

/** The plain ingest body of `content` padded (an ignored field) to `bytes`. */
function paddedBody(bytes: number, content = CONTENT): string {
  const bare = JSON.stringify({ content, padding: "" });
  return JSON.stringify({ content, padding: "x".repeat(bytes - Buffer.byteLength(bare)) });
}

/** `i`: a number no other request of the run had, for the keys and delivery ids of each. */
type Send = (i: number) => Promise<number>;
let requests = 0;

/** One side's run: requests per second, and CPU time per request (µs) of Parley and PostgreSQL. */
interface Measured {
  rps: number;
  cpu: number;
  pgCpu: number;
}

/**
 * CPU time (µs) of the PostgreSQL backends serving the benchmark's pool, by pid. Only those: the
 * server's background processes (WAL writer, checkpointer, autovacuum) also serve other work on a
 * shared machine, and what they do for this benchmark is not told apart from it.
 */
async function backendsCpu(admin: pg.Client): Promise<Map<number, number>> {
  const { rows } = await admin.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE application_name = $1",
    [TAG],
  );
  const cpu = new Map<number, number>();
  for (const { pid } of rows) {
    const micros = processCpuMicros(pid);
    if (micros !== undefined) cpu.set(pid, micros);
  }
  return cpu;
}

/**
 * Runs `send` with `concurrency` in flight for `seconds`; non-2xx fail it. CPU: this process's
 * (the app and the requests injected into it, the same driver on every side), and on PostgreSQL
 * that of the backends serving its pool.
 */
async function measure(
  target: Target,
  send: Send,
  seconds: number,
  concurrency: number,
): Promise<Measured> {
  let done = 0;
  let failed = 0;
  const pgBefore = target.admin ? await backendsCpu(target.admin) : new Map<number, number>();
  const cpuBefore = process.cpuUsage();
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const status = await send(requests++);
        if (status < 200 || status >= 300) failed++;
        done++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpuBefore);
  let pgUsed = 0;
  if (target.admin)
    for (const [pid, micros] of await backendsCpu(target.admin))
      pgUsed += micros - (pgBefore.get(pid) ?? 0);
  if (failed > 0) throw new Error(`${failed} of ${done} requests were not 2xx`);
  return { rps: done / elapsed, cpu: (used.user + used.system) / done, pgCpu: pgUsed / done };
}

/** Each side's runs, one per round, and their medians. */
interface SideBySide {
  runs: Record<string, Measured[]>;
  median: Record<string, Measured>;
}

/**
 * Each side measured once per round, in turn, the order reversed every other round (so sides
 * listed next to each other run next to each other in every round); medians of each.
 */
async function sideBySide(
  target: Target,
  sides: Record<string, Send>,
  options: InboundBenchOptions,
): Promise<SideBySide> {
  const names = Object.keys(sides);
  const runs: Record<string, Measured[]> = Object.fromEntries(names.map((k) => [k, []]));
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 ? [...names].reverse() : names;
    for (const name of order)
      runs[name]!.push(await measure(target, sides[name]!, options.seconds, options.concurrency));
  }
  const median_ = Object.fromEntries(
    Object.entries(runs).map(([name, values]) => [
      name,
      {
        rps: median(values.map((v) => v.rps)),
        cpu: median(values.map((v) => v.cpu)),
        pgCpu: median(values.map((v) => v.pgCpu)),
      },
    ]),
  );
  return { runs, median: median_ };
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

/** µs of CPU per request: Parley's, plus PostgreSQL's when it is measured. */
const cpuText = (m: Measured) =>
  `${m.cpu.toFixed(0)}${m.pgCpu ? ` + ${m.pgCpu.toFixed(0)} PostgreSQL` : ""} µs`;
const totalCpu = (m: Measured) => m.cpu + m.pgCpu;

/**
 * One comparison: `side`'s rate as a share of `base`'s, and the same share by CPU per request
 * (base's CPU over side's: the rate share a machine with nothing else running would give when
 * the work is CPU-bound); each the median of the rounds' own ratios (the two sides ran one after
 * the other in each round, so a slow minute of a shared machine weighs on both).
 */
function compared(result: SideBySide, side: string, base: string): { rate: number; cpu: number } {
  const a = result.runs[side]!;
  const b = result.runs[base]!;
  return {
    rate: median(a.map((run, k) => run.rps / b[k]!.rps)),
    cpu: median(a.map((run, k) => totalCpu(b[k]!) / totalCpu(run))),
  };
}

const verdict = (share: { rate: number; cpu: number }, atLeast: number) =>
  share.rate >= atLeast && share.cpu >= atLeast
    ? ""
    : share.rate >= atLeast || share.cpu >= atLeast
      ? ": one of the two UNDER"
      : ": UNDER";

async function runOn(name: Target["name"], options: InboundBenchOptions): Promise<void> {
  const target = await open(name);
  try {
    const hook = await createPostingFixtures(target.ctx, { signingSecret: SECRET });
    // The seeded keys belong to another webhook of the same room.
    const other = await createInboundWebhook(target.ctx, hook.adminId, {
      roomId: hook.roomId,
      displayName: "Other",
    });
    const url = `/api/public/webhooks/ingest/${hook.token}`;
    const run = crypto.randomBytes(4).toString("hex");
    const body = JSON.stringify({ content: CONTENT });
    const push = pushPayload();
    const signature = await sign(SECRET, push);
    const padded = paddedBody(Buffer.byteLength(push));
    // The message /github makes of the push, posted through plain ingest in a body of the same size.
    const pushed = githubMessage("push", JSON.parse(push) as Record<string, unknown>);
    if (pushed.kind !== "post") throw new Error("the push posts nothing");
    const samePadded = paddedBody(Buffer.byteLength(push), pushed.content);
    const json = { "content-type": "application/json" };
    const inject = async (u: string, payload: string, headers: Record<string, string>) =>
      (await target.app.inject({ method: "POST", url: u, headers, payload })).statusCode;

    const plain: Send = () => inject(url, body, json);
    const keyed =
      (phase: string): Send =>
      (i) =>
        inject(url, body, { ...json, "idempotency-key": `${run}-${phase}-${i}` });
    const github =
      (phase: string): Send =>
      (i) =>
        inject(`${url}/github`, push, {
          ...json,
          "x-github-event": "push",
          "x-github-delivery": `${run}-${phase}-${i}`,
          "x-hub-signature-256": signature,
        });
    const plain20k: Send = () => inject(url, padded, json);
    const sameMessage: Send = () => inject(url, samePadded, json);

    // Warm-up: JIT, prepared statements, caches.
    await measure(target, plain, 1, options.concurrency);
    await measure(target, keyed("warm"), 1, options.concurrency);
    await measure(target, github("warm"), 1, options.concurrency);
    await measure(target, plain20k, 1, options.concurrency);
    await measure(target, sameMessage, 1, options.concurrency);

    const phase = await sideBySide(
      target,
      { plain, keyed: keyed("a"), plain20k, github: github("a"), sameMessage },
      options,
    );
    const first = phase.median;
    const r = (n: number) => Math.round(n).toLocaleString("en");
    const keyedShare = compared(phase, "keyed", "plain");
    console.log(
      `${name.padEnd(10)} with an Idempotency-Key: ${pct(keyedShare.rate, 1)} of plain ingest by rate ` +
        `(${r(first.keyed!.rps)} against ${r(first.plain!.rps)}/s), ${pct(keyedShare.cpu, 1)} by CPU ` +
        `(${cpuText(first.keyed!)} against ${cpuText(first.plain!)} per request) ` +
        `(at least 85%)${verdict(keyedShare, 0.85)}`,
    );
    const githubShare = compared(phase, "github", "plain20k");
    console.log(
      `${name.padEnd(10)} /github signed push of ${Buffer.byteLength(push)} bytes: ${pct(githubShare.rate, 1)} ` +
        `of plain ingest of ${Buffer.byteLength(padded)} bytes by rate (${r(first.github!.rps)} against ` +
        `${r(first.plain20k!.rps)}/s), ${pct(githubShare.cpu, 1)} by CPU (${cpuText(first.github!)} ` +
        `against ${cpuText(first.plain20k!)}) (at least 70%)${verdict(githubShare, 0.7)}`,
    );
    // What /github adds of its own (the signature, the 20 KB payload parsed, the push formatted,
    // the delivery id claimed) apart from what the longer message it posts costs anywhere.
    const ownShare = compared(phase, "github", "sameMessage");
    console.log(
      `${name.padEnd(10)} /github against plain ingest of the same size posting the same message ` +
        `(${Buffer.byteLength(pushed.content)} bytes): ${pct(ownShare.rate, 1)} by rate ` +
        `(${r(first.sameMessage!.rps)}/s), ${pct(ownShare.cpu, 1)} by CPU (${cpuText(first.sameMessage!)})`,
    );
    if (options.keys === 0) return;

    const seedStarted = performance.now();
    await seedKeys(target, other.id, options.keys);
    const seeded = (performance.now() - seedStarted) / 1000;
    await measure(target, keyed("warm-large"), 1, options.concurrency);
    const largePhase = await sideBySide(target, { plain, keyed: keyed("b") }, options);
    const large = largePhase.median;
    // Against the empty table: keyed/plain in this phase against the same before (plain ingest
    // does not touch the table: what moves it is the machine), by rate and by CPU; and the keyed
    // request's own CPU against before.
    const largeShare = compared(largePhase, "keyed", "plain");
    const byRate = largeShare.rate / keyedShare.rate;
    const byCpu = largeShare.cpu / keyedShare.cpu;
    const ownCpu = totalCpu(first.keyed!) / totalCpu(large.keyed!);
    const within = (x: number) => Math.abs(1 - x) <= 0.1;
    console.log(
      `${name.padEnd(10)} ${options.keys.toLocaleString("en")} keys seeded in ${seeded.toFixed(1)} s: keyed/plain ` +
        `${pct(largeShare.rate, 1)} by rate and ${pct(largeShare.cpu, 1)} by CPU, against ${pct(keyedShare.rate, 1)} ` +
        `and ${pct(keyedShare.cpu, 1)} with the empty table: ${pct(byRate, 1)} and ${pct(byCpu, 1)} of it; ` +
        `with a key ${cpuText(large.keyed!)} against ${cpuText(first.keyed!)} per request (${pct(ownCpu, 1)}) ` +
        `(within 10%)${within(byRate) && within(byCpu) ? "" : ": OVER"}`,
    );
  } finally {
    await target.cleanup();
  }
}

export async function runInboundBench(
  options: InboundBenchOptions,
  /** "sqlite" or "postgres": that database only. */
  only?: string,
): Promise<void> {
  let names: Target["name"][] = benchDatabaseUrl() ? ["SQLite", "PostgreSQL"] : ["SQLite"];
  if (!benchDatabaseUrl())
    console.log("(PostgreSQL skipped: set PARLEY_TEST_DATABASE_URL or DATABASE_URL)");
  if (only) names = names.filter((name) => name.toLowerCase().startsWith(only.toLowerCase()));
  for (const name of names) await runOn(name, options);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean" },
      rounds: { type: "string" },
      seconds: { type: "string" },
      keys: { type: "string" },
      only: { type: "string" },
    },
  });
  const number = (text: string | undefined) => (text === undefined ? undefined : Number(text));
  await runInboundBench(
    inboundOptionsFrom({
      quick: values.quick,
      rounds: number(values.rounds),
      seconds: number(values.seconds),
      keys: number(values.keys),
    }),
    values.only,
  );
}
