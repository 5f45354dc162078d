/**
 * Delivery benchmark: events committed through the event spine, delivered by the real dispatcher
 * (claim, sign, send, record) to a loopback receiver answering 204.
 *
 *   burst   N events committed as fast as 4 writers can; deliveries/s from the first commit to
 *           the last arrival, and latency from each event's commit to its arrival;
 *   bare    the same receiver hit by a plain undici POST loop at the dispatcher's concurrency:
 *           the practical ceiling on this machine; the burst rate is reported as a share of it;
 *   steady  a fixed 500 events/s for 5 s: latency from commit to arrival (p50/p99);
 *   drain   N deliveries queued while no dispatcher ran, then one started: the engine's own rate
 *           and CPU per delivery, without the producer beside it.
 *
 * Runs on SQLite (a file in a temp dir, as `parley serve` uses it) and on PostgreSQL when
 * PARLEY_TEST_DATABASE_URL or DATABASE_URL is set (in a schema of its own, dropped afterwards).
 * Run: npm run bench -w @parley/server (or npx tsx bench/delivery.bench.ts).
 */
import crypto from "node:crypto";
import fs from "node:fs";
import { fork } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import pg from "pg";
import { Agent, request } from "undici";
import { createAppContext, type AppContext } from "../src/app-context.js";
import { loadConfig } from "../src/config/load-config.js";
import { sealSecret } from "../src/config/secret-box.js";
import { openDatabase } from "../src/db/open-database.js";
import { createMetrics } from "../src/operations/metrics.js";
import { createDeliveryMetrics } from "../src/webhooks/outbound/delivery-engine/delivery-metrics.js";
import { createDispatcher } from "../src/webhooks/outbound/delivery-engine/create-dispatcher.js";
import type { Dispatcher } from "../src/webhooks/outbound/delivery-engine/dispatcher.js";
import { signPayload } from "../src/webhooks/outbound/delivery-engine/sign-payload.js";

const BURST_EVENTS = Number(process.env.BENCH_DELIVERY_EVENTS ?? 5_000);
const STEADY_RATE = 500;
const STEADY_SECONDS = 5;
const PRODUCERS = 4;

interface Receiver {
  url: string;
  /** Arrival time (ms on the shared wall clock: timeOrigin + performance.now()) by event key. */
  arrivals: Map<string, number>;
  readonly count: number;
  waitFor(n: number, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The receiver runs in a process of its own, as a real one would: it must not take CPU from the
 * dispatcher it measures. It answers 204, and reports each event key with its arrival time.
 */
const RECEIVER_SOURCE = `
  const http = require("node:http");
  let batch = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const at = performance.timeOrigin + performance.now();
      const key = /"username":"([^"]+)"/.exec(Buffer.concat(chunks).toString("utf8"));
      batch.push(key ? key[1] : "", at);
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60000;
  setInterval(() => { if (batch.length) { process.send(batch); batch = []; } }, 5).unref();
  server.listen(0, "127.0.0.1", () => process.send({ port: server.address().port }));
  process.on("disconnect", () => process.exit(0));
`;

async function startReceiver(): Promise<Receiver> {
  const child = fork("-e", [RECEIVER_SOURCE], {
    execArgv: [],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const arrivals = new Map<string, number>();
  let count = 0;
  let waiter: { n: number; resolve: () => void } | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    child.once("error", reject);
    child.on("message", (message: unknown) => {
      if (!Array.isArray(message)) return resolve((message as { port: number }).port);
      for (let i = 0; i < message.length; i += 2) {
        const key = message[i] as string;
        if (key && !arrivals.has(key)) arrivals.set(key, message[i + 1] as number);
        count++;
      }
      if (waiter && count >= waiter.n) waiter.resolve();
    });
  });
  return {
    url: `http://127.0.0.1:${port}/hook`,
    arrivals,
    get count() {
      return count;
    },
    waitFor(n, timeoutMs) {
      if (count >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`only ${count} of ${n} arrived`)),
          timeoutMs,
        );
        waiter = {
          n,
          resolve: () => {
            clearTimeout(timer);
            waiter = undefined;
            resolve();
          },
        };
      });
    },
    close: async () => {
      child.disconnect();
      await new Promise((resolve) => child.once("exit", resolve));
    },
  };
}

/** The shared wall clock of both processes, in ms with sub-ms precision. */
const clock = () => performance.timeOrigin + performance.now();

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function latencies(commits: Map<string, number>, arrivals: Map<string, number>): number[] {
  const out: number[] = [];
  for (const [key, committed] of commits) {
    const arrived = arrivals.get(key);
    if (arrived !== undefined) out.push(arrived - committed);
  }
  return out.sort((a, b) => a - b);
}

const ms = (value: number) => `${value.toFixed(1)} ms`;

interface Target {
  name: string;
  ctx: AppContext;
  cleanup(): Promise<void>;
}

async function sqliteTarget(): Promise<Target> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-"));
  const ctx = await createAppContext(benchConfig(dataDir, undefined));
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
  const ctx = await createAppContext(benchConfig(dataDir, url), { database });
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

function benchConfig(dataDir: string, databaseUrl: string | undefined) {
  return loadConfig(
    {},
    {
      dataDir,
      databaseUrl,
      logLevel: "silent",
      webhookAllowHttp: true,
      webhookAllowPrivateNetworks: true,
      webhookTimeoutMs: 5_000,
      // PostgreSQL keeps generated keys in the database, wrapped by a master key from outside.
      masterKey: crypto.randomBytes(32).toString("hex"),
    },
  );
}

async function addEndpoint(ctx: AppContext, url: string, secret: string): Promise<void> {
  const now = Date.now();
  await ctx.db
    .insertInto("webhooks")
    .values({
      name: "bench",
      url,
      secret_ciphertext: sealSecret(ctx.keys.secretKey, secret),
      events: JSON.stringify(["ADMIN_USER_DISABLED"]),
      enabled: 1,
      created_at: now,
      updated_at: now,
    })
    .execute();
}

function emit(ctx: AppContext, key: string): Promise<void> {
  return ctx.database.transaction((tx) =>
    tx.emit("ADMIN_USER_DISABLED", { username: key, adminActor: "bench" }),
  );
}

/** A plain undici POST loop: same receiver, same body size, same signature work, same concurrency. */
async function barePostRate(
  url: string,
  concurrency: number,
  total: number,
): Promise<{ rate: number; cpuMicros: number }> {
  const agent = new Agent();
  const secret = "bench-secret-0123456789";
  let sent = 0;
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (sent < total) {
        const i = sent++;
        const body = Buffer.from(
          JSON.stringify({
            event: "ADMIN_USER_DISABLED",
            timestamp: new Date().toISOString(),
            webhookId: 1,
            data: { username: `bare-${i}`, adminActor: "bench" },
          }),
        );
        const res = await request(url, {
          dispatcher: agent,
          method: "POST",
          headers: {
            "content-type": "application/json",
            "user-agent": "Parley-Webhooks/1.0",
            "x-webhook-signature-256": signPayload(secret, body),
          },
          body,
        });
        await res.body.dump();
      }
    }),
  );
  const elapsed = performance.now() - start;
  const cpu = process.cpuUsage(cpuStart);
  await agent.close();
  return { rate: (total / elapsed) * 1000, cpuMicros: (cpu.user + cpu.system) / total };
}

async function benchTarget(target: Target): Promise<void> {
  const { ctx } = target;
  const receiver = await startReceiver();
  await addEndpoint(ctx, receiver.url, "bench-secret-0123456789");
  const metrics = createDeliveryMetrics(ctx.db, createMetrics().registry, ctx.now);
  const dispatcher: Dispatcher = createDispatcher(ctx, metrics);
  dispatcher.start();
  // One endpoint: the per-endpoint cap is the concurrency that applies.
  const concurrency = Math.min(
    ctx.config.webhookConcurrency,
    ctx.config.webhookPerEndpointConcurrency,
  );

  // Warm-up: connections, prepared plans, JIT.
  for (let i = 0; i < 200; i++) await emit(ctx, `warm-${i}`);
  await receiver.waitFor(200, 30_000);
  await dispatcher.idle();

  // Burst.
  const commits = new Map<string, number>();
  const base = receiver.count;
  const start = clock();
  const cpuStart = process.cpuUsage();
  // Several writers, as a server commits events from concurrent requests.
  let next = 0;
  await Promise.all(
    Array.from({ length: PRODUCERS }, async () => {
      while (next < BURST_EVENTS) {
        const key = `burst-${next++}`;
        await emit(ctx, key);
        commits.set(key, clock());
      }
    }),
  );
  const committed = clock();
  await receiver.waitFor(base + BURST_EVENTS, 120_000);
  const cpu = process.cpuUsage(cpuStart);
  const cpuPerDelivery = (cpu.user + cpu.system) / BURST_EVENTS;
  const last = Math.max(...[...commits.keys()].map((key) => receiver.arrivals.get(key) ?? 0));
  const elapsed = last - start;
  const rate = (BURST_EVENTS / elapsed) * 1000;
  const burstLatency = latencies(commits, receiver.arrivals);
  await dispatcher.idle();

  // The practical ceiling: a bare POST loop to the same receiver at the same concurrency.
  const bare = await barePostRate(receiver.url, concurrency, Math.max(BURST_EVENTS, 5_000));

  // Steady rate.
  const steady = new Map<string, number>();
  const total = STEADY_RATE * STEADY_SECONDS;
  const steadyBase = receiver.count;
  const steadyStart = clock();
  const pending: Array<Promise<void>> = [];
  for (let i = 0; i < total; i++) {
    const due = steadyStart + (i * 1000) / STEADY_RATE;
    const wait = due - clock();
    if (wait > 1) await sleep(wait);
    const key = `steady-${i}`;
    // Each event on its own schedule: a slow commit must not hold back the next one.
    pending.push(emit(ctx, key).then(() => void steady.set(key, clock())));
  }
  await Promise.all(pending);
  await receiver.waitFor(steadyBase + total, 60_000);
  const steadyLatency = latencies(steady, receiver.arrivals);

  await dispatcher.stop();

  // Drain: a backlog queued while no dispatcher ran, then one started: the engine alone, without
  // the producer beside it.
  for (let i = 0; i < BURST_EVENTS; i++) await emit(ctx, `drain-${i}`);
  const drainer = createDispatcher(
    ctx,
    createDeliveryMetrics(ctx.db, createMetrics().registry, ctx.now),
  );
  const drainBase = receiver.count;
  const drainStart = clock();
  const drainCpu = process.cpuUsage();
  drainer.start();
  await receiver.waitFor(drainBase + BURST_EVENTS, 120_000);
  const drainRate = (BURST_EVENTS / (clock() - drainStart)) * 1000;
  const drainCpuUsed = process.cpuUsage(drainCpu);
  const drainCpuPerDelivery = (drainCpuUsed.user + drainCpuUsed.system) / BURST_EVENTS;
  await drainer.stop();
  await receiver.close();

  console.log(`\n${target.name} (one endpoint, ${concurrency} deliveries in flight)`);
  console.log(
    `  burst of ${BURST_EVENTS}: committed in ${ms(committed - start)} (${((BURST_EVENTS / (committed - start)) * 1000).toFixed(0)} events/s); ` +
      `delivered ${rate.toFixed(0)} deliveries/s end to end`,
  );
  console.log(
    `    commit -> arrival: p50 ${ms(percentile(burstLatency, 50))}, p99 ${ms(percentile(burstLatency, 99))}`,
  );
  console.log(
    `  bare undici POST loop: ${bare.rate.toFixed(0)} requests/s -> delivery at ${((rate / bare.rate) * 100).toFixed(0)}% of it`,
  );
  console.log(
    `  CPU per delivery ${cpuPerDelivery.toFixed(0)} µs (commit included) vs ${bare.cpuMicros.toFixed(0)} µs per bare POST ` +
      `-> ${((bare.cpuMicros / cpuPerDelivery) * 100).toFixed(0)}% (the ratio a busy machine does not skew)`,
  );
  console.log(
    `  drain of ${BURST_EVENTS} queued: ${drainRate.toFixed(0)} deliveries/s, ${drainCpuPerDelivery.toFixed(0)} µs CPU each ` +
      `-> ${((drainRate / bare.rate) * 100).toFixed(0)}% of the bare rate, ${((bare.cpuMicros / drainCpuPerDelivery) * 100).toFixed(0)}% of its CPU efficiency`,
  );
  console.log(
    `  steady ${STEADY_RATE} events/s for ${STEADY_SECONDS} s: commit -> arrival p50 ${ms(percentile(steadyLatency, 50))}, ` +
      `p99 ${ms(percentile(steadyLatency, 99))}, max ${ms(steadyLatency.at(-1) ?? NaN)}`,
  );
}

/**
 * What operating features cost per delivery: the drain rate of an endpoint signing with both
 * schemes (two HMACs, one of them made per attempt) and sending 3 custom headers (decrypted per
 * delivery), against the same endpoint plain. Alternated and best-of-3 each, so the machine's
 * other load weighs on both alike. Target: within 10% of the plain rate.
 */
async function operatedOverhead(target: Target): Promise<void> {
  const { ctx } = target;
  const receiver = await startReceiver();
  await addEndpoint(ctx, receiver.url, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  const headers = sealSecret(
    ctx.keys.secretKey,
    JSON.stringify({
      authorization: "Bearer bench-token-1234",
      "x-tenant": "acme",
      "x-env": "bench",
    }),
  );
  const rounds = 3;
  const events = 3_000;
  const best = { plain: 0, operated: 0 };
  for (let round = 0; round < rounds * 2; round++) {
    const mode = round % 2 === 0 ? "plain" : "operated";
    await ctx.db
      .updateTable("webhooks")
      .set(
        mode === "plain"
          ? { signature_scheme: "parley", headers_ciphertext: null }
          : { signature_scheme: "both", headers_ciphertext: headers },
      )
      .execute();
    for (let i = 0; i < events; i++) await emit(ctx, `${mode}-${round}-${i}`);
    const dispatcher = createDispatcher(
      ctx,
      createDeliveryMetrics(ctx.db, createMetrics().registry, ctx.now),
    );
    const base = receiver.count;
    const start = clock();
    dispatcher.start();
    await receiver.waitFor(base + events, 120_000);
    best[mode] = Math.max(best[mode], (events / (clock() - start)) * 1000);
    await dispatcher.stop();
  }
  await receiver.close();
  const ratio = best.operated / best.plain;
  console.log(
    `  signatureScheme both + 3 custom headers: ${best.operated.toFixed(0)} deliveries/s vs ${best.plain.toFixed(0)} plain ` +
      `-> ${(ratio * 100).toFixed(0)}% (target >= 90%) ${ratio >= 0.9 ? "met" : "MISSED"}`,
  );
}

export async function runDeliveryBench(): Promise<void> {
  const targets: Array<() => Promise<Target>> = [sqliteTarget];
  const url = process.env.PARLEY_TEST_DATABASE_URL || process.env.DATABASE_URL;
  if (url) targets.push(() => postgresTarget(url));
  else console.log("(PostgreSQL skipped: set PARLEY_TEST_DATABASE_URL or DATABASE_URL)");
  for (const open of targets) {
    const target = await open();
    try {
      await benchTarget(target);
      await operatedOverhead(target);
    } finally {
      await target.cleanup();
    }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runDeliveryBench();
}
