/**
 * Delivery benchmark: events committed through the event spine, delivered by the real dispatcher
 * (claim, sign, send, record) to a loopback receiver answering 204, with one endpoint and the
 * dispatcher's concurrency (16 in flight). Side by side in one run, in alternating rounds
 * (medians printed):
 *
 *   bare      a plain undici POST loop to the same receiver at the same concurrency, signing the
 *             same body: the practical ceiling on this machine;
 *   drain     N deliveries queued while no dispatcher ran, then one started: the engine's own rate
 *             and CPU per delivery, without the producer beside it;
 *   burst     N complete chat posts (postMessage: validation, DLP, moderation, the message and its
 *             MESSAGE_CREATED fan-out in one transaction) by `writers` concurrent writers while
 *             the engine sends: deliveries/s from the first post to the last arrival, and latency
 *             from each post's commit to its arrival;
 *   graphile-worker 0.17 (PostgreSQL only), the same signed POST at the same concurrency, plain
 *             and with its batching options: drain and burst of bare job inserts (see
 *             graphile-worker-peer.ts);
 *   BullMQ 6  (when redis-server is on PATH) the same, on a Redis of its own without persistence
 *             and with the append-only file (see bullmq-peer.ts).
 *
 * Then per database a steady run: posts at a fixed 500/s for `steadySeconds` (60 in `npm run
 * bench`), commit-to-arrival p50/p99/max, and this process's RSS every 5 s; and what endpoint
 * features cost against a plain endpoint (both signature schemes and custom headers, CloudEvents
 * formats, trace context, OTLP export).
 *
 * Runs on SQLite (a file in a temp dir, as `parley serve` uses it) and on PostgreSQL when
 * PARLEY_TEST_DATABASE_URL or DATABASE_URL is set (in schemas of their own, dropped afterwards).
 * Run: npm run bench -w @parley/server, or
 *   npx tsx bench/delivery.bench.ts [--events 5000] [--rounds 3] [--writers 16]
 *     [--steady-seconds 60] [--steady-rate 500] [--quick]
 *     [--variant-rounds 6] [--variants-only]   (the endpoint-feature drains: how many rounds; alone)
 *     [--send-threads N]   (Parley's send threads; default: this machine's default)
 * PARLEY_BENCH_CPU_PROFILE=<dir>: a CPU profile of each endpoint-feature drain, written there.
 */
import { fork } from "node:child_process";
import { createRequire } from "node:module";
import os from "node:os";
import v8 from "node:v8";
import vm from "node:vm";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { performance as nodePerformance } from "node:perf_hooks";
import { sql } from "kysely";
import { Agent, request } from "undici";
import type { AppContext } from "../src/app-context.js";
import { sealSecret } from "../src/config/secret-box.js";
import { createMetrics } from "../src/operations/metrics.js";
import { createDeliveryMetrics } from "../src/webhooks/outbound/delivery-engine/delivery-metrics.js";
import {
  createDispatcher,
  senderFor,
} from "../src/webhooks/outbound/delivery-engine/create-dispatcher.js";
import type { Dispatcher } from "../src/webhooks/outbound/delivery-engine/dispatcher.js";
import { signPayload } from "../src/webhooks/outbound/delivery-engine/sign-payload.js";
import { startOpenTelemetry } from "../src/tracing/open-telemetry.js";
import {
  benchDatabaseUrl,
  createPostingRoom,
  median,
  openPostgresTarget,
  openSqliteTarget,
  percentile,
  postOne,
  type BenchTarget,
  type PostingRoom,
} from "./bench-targets.js";
import { postgresServerCpu, postgresServerCpuSince, processCpuMicros } from "./cpu-accounting.js";
import { hasRedisServer, openBullMqPeer, type BullMqPeer } from "./bullmq-peer.js";
import { openGraphilePeer, type GraphilePeer } from "./graphile-worker-peer.js";
import { drainProfiler } from "./drain-profiler.js";
import { numberOption } from "./number-option.js";
import { inParallel } from "./in-parallel.js";

export interface DeliveryBenchOptions {
  /** Deliveries per drain and per burst. */
  events: number;
  /** Alternating rounds of every participant's drain and burst; medians are printed. */
  rounds: number;
  /** Concurrent writers of the burst's posts (and of graphile-worker's job inserts). */
  writers: number;
  /** Length of the steady run on each database; 0 skips it. */
  steadySeconds: number;
  steadyRate: number;
  /** Rounds of the endpoint-feature drains (each variant against plain). */
  variantRounds: number;
  /** Only the endpoint-feature drains: no queue comparison, no steady run. */
  variantsOnly: boolean;
  /** Parley's send threads (PARLEY_WEBHOOK_SEND_THREADS); undefined: the machine's default. */
  sendThreads?: number | undefined;
}

export const DELIVERY_DEFAULTS: DeliveryBenchOptions = {
  events: Number(process.env.BENCH_DELIVERY_EVENTS ?? 5_000),
  rounds: 3,
  writers: 16,
  steadySeconds: 60,
  steadyRate: 500,
  // Six: each of the six variants drains once in every position of a round.
  variantRounds: 6,
  variantsOnly: false,
};

/** For development: a minute or two instead of several. */
export const DELIVERY_QUICK: DeliveryBenchOptions = {
  ...DELIVERY_DEFAULTS,
  events: 1_000,
  rounds: 1,
  steadySeconds: 10,
};

const RSS_SAMPLE_MS = 5_000;
export const SECRET = "bench-secret-0123456789";

const eventLoopUtilization = nodePerformance.eventLoopUtilization;

export interface Receiver {
  url: string;
  /** The receiver process (its CPU is counted apart from the dispatcher's). */
  pid: number;
  /** Arrival time (ms on the shared wall clock: timeOrigin + performance.now()) by event key. */
  arrivals: Map<string, number>;
  readonly count: number;
  /** Connections (TLS: handshakes completed) the receiver accepted so far. */
  readonly connections: number;
  waitFor(n: number, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The receiver runs in a process of its own, as a real one would: it must not take CPU from the
 * dispatcher it measures. It answers 204, and reports each event key with its arrival time: the
 * `username` of an ADMIN_USER_DISABLED event, "m" + the `messageId` of a MESSAGE_CREATED, followed
 * by "@<n>" for a request to `/hook/<n>` (one receiver serving several endpoints).
 */
const RECEIVER_SOURCE = `
  const http = require("node:http");
  const https = require("node:https");
  const tls = process.argv[1] ? JSON.parse(process.argv[1]) : null;
  let batch = [];
  let connections = 0;
  const handler = (req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const at = performance.timeOrigin + performance.now();
      const key = /"username":"([^"]+)"|"messageId":([0-9]+)/.exec(Buffer.concat(chunks).toString("utf8"));
      // An endpoint at /hook/<n> (several endpoints on one receiver): its keys end in "@<n>".
      const suffix = req.url.length > 6 ? "@" + req.url.slice(6) : "";
      batch.push(key ? (key[1] || "m" + key[2]) + suffix : "", at);
      res.writeHead(204).end();
    });
  };
  const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
  server.on(tls ? "secureConnection" : "connection", () => connections++);
  server.keepAliveTimeout = 60000;
  setInterval(() => { if (batch.length) { process.send({ batch, connections }); batch = []; } }, 5).unref();
  server.listen(0, "127.0.0.1", () => process.send({ port: server.address().port }));
  process.on("disconnect", () => process.exit(0));
`;

/**
 * With `tls`, the receiver serves HTTPS with these node:https options (a key and certificate; with
 * `requestCert` and `rejectUnauthorized`, only clients with a certificate signed by `ca`, as an
 * mTLS ingress does) at https://localhost:PORT/hook.
 */
export async function startReceiver(tls?: {
  key: string;
  cert: string;
  ca?: string;
  requestCert?: boolean;
  rejectUnauthorized?: boolean;
}): Promise<Receiver> {
  const child = fork("-e", [RECEIVER_SOURCE, ...(tls === undefined ? [] : [JSON.stringify(tls)])], {
    execArgv: [],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const arrivals = new Map<string, number>();
  let count = 0;
  let connections = 0;
  let waiter: { n: number; resolve: () => void } | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    child.once("error", reject);
    child.on("message", (message: { port: number } | { batch: unknown[]; connections: number }) => {
      if (!("batch" in message)) return resolve(message.port);
      const { batch } = message;
      connections = message.connections;
      for (let i = 0; i < batch.length; i += 2) {
        const key = batch[i] as string;
        if (key && !arrivals.has(key)) arrivals.set(key, batch[i + 1] as number);
        count++;
      }
      if (waiter && count >= waiter.n) waiter.resolve();
    });
  });
  return {
    url: tls === undefined ? `http://127.0.0.1:${port}/hook` : `https://localhost:${port}/hook`,
    pid: child.pid!,
    arrivals,
    get count() {
      return count;
    },
    get connections() {
      return connections;
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
export const clock = () => performance.timeOrigin + performance.now();

function latencies(commits: Map<string, number>, arrivals: Map<string, number>): number[] {
  const out: number[] = [];
  for (const [key, committed] of commits) {
    const arrived = arrivals.get(key);
    if (arrived !== undefined) out.push(arrived - committed);
  }
  return out.sort((a, b) => a - b);
}

const ms = (value: number) => `${value.toFixed(1)} ms`;
const rate = (value: number) => value.toFixed(0);
const pct = (value: number) => `${(value * 100).toFixed(0)}%`;

export async function addEndpoint(ctx: AppContext, url: string, secret: string): Promise<number> {
  const now = Date.now();
  const row = await ctx.db
    .insertInto("webhooks")
    .values({
      name: "bench",
      url,
      secret_ciphertext: sealSecret(ctx.keys.secretKey, secret),
      events: JSON.stringify(["ADMIN_USER_DISABLED", "MESSAGE_CREATED"]),
      enabled: 1,
      created_at: now,
      updated_at: now,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

export function emit(ctx: AppContext, key: string): Promise<void> {
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

export interface DrainResult {
  rate: number;
  cpuMicros: number;
  /** µs per delivery the main thread's event loop was busy (Parley; the rest ran on threads). */
  mainMicros?: number;
  /** µs of CPU per delivery of the receiver process, and (PostgreSQL) of the database server. */
  receiverMicros?: number;
  databaseMicros?: number;
  /** The CPU per job of the peer's own server process (Redis), when it has one. */
  serverCpuMicros?: number;
}
export interface BurstResult {
  rate: number;
  /** Posts (or job inserts) per second, the producer side alone. */
  commitRate: number;
  p50: number;
  p99: number;
}

/** Parley on one database: its receiver, its endpoint, its room. */
export interface ParleySide {
  target: BenchTarget;
  receiver: Receiver;
  room: PostingRoom;
  endpointId: number;
}

/**
 * The dispatcher a server would make of `ctx`'s config, its sender's send threads started (a
 * server starts them once; a benchmark's timing must not include it).
 */
export async function newDispatcher(ctx: AppContext): Promise<Dispatcher> {
  const sender = senderFor(ctx.config);
  await sender.ready?.();
  return createDispatcher(ctx, createDeliveryMetrics(ctx.db, createMetrics().registry, ctx.now), {
    sender,
  });
}

export async function openParleySide(open: () => Promise<BenchTarget>): Promise<ParleySide> {
  const target = await open();
  const receiver = await startReceiver();
  const endpointId = await addEndpoint(target.ctx, receiver.url, SECRET);
  const room = await createPostingRoom(target.ctx);
  return { target, receiver, room, endpointId };
}

/** Connections, prepared plans, JIT: 500 posts delivered before anything is measured. */
export async function warmUp(side: ParleySide, writers: number): Promise<void> {
  const dispatcher = await newDispatcher(side.target.ctx);
  dispatcher.start();
  const base = side.receiver.count;
  await inParallel(500, writers, async () => void (await postOne(side.target.ctx, side.room)));
  await side.receiver.waitFor(base + 500, 120_000);
  await dispatcher.stop();
}

/** Makes the dispatcher of a drain or a burst (and readies its sender) before it is timed. */
export type MakeDispatcher = (ctx: AppContext) => Promise<Dispatcher>;
const defaultDispatcher: MakeDispatcher = newDispatcher;

/** A backlog queued while no dispatcher runs, then one started: the engine alone. */
export async function parleyDrain(
  side: ParleySide,
  tag: string,
  options: Pick<DeliveryBenchOptions, "events" | "writers">,
  make: MakeDispatcher = defaultDispatcher,
): Promise<DrainResult> {
  const { ctx } = side.target;
  await inParallel(options.events, options.writers, (i) => emit(ctx, `${tag}-${i}`));
  // What autovacuum does between two runs on a default server (the test server has it off): the
  // earlier rounds' dead rows would otherwise make each drain slower than the one before.
  if (ctx.dialect === "postgres")
    await sql`VACUUM ANALYZE webhook_deliveries, webhook_attempts`.execute(ctx.db);
  const dispatcher = await make(ctx);
  const base = side.receiver.count;
  const database = ctx.dialect === "postgres" ? postgresServerCpu() : undefined;
  const receiverCpu = processCpuMicros(side.receiver.pid) ?? NaN;
  const start = clock();
  const cpu = process.cpuUsage();
  const loop = eventLoopUtilization();
  dispatcher.start();
  await side.receiver.waitFor(base + options.events, 300_000);
  const elapsed = clock() - start;
  const used = process.cpuUsage(cpu);
  const busy = eventLoopUtilization(loop);
  const receiverUsed = (processCpuMicros(side.receiver.pid) ?? NaN) - receiverCpu;
  const databaseUsed = database === undefined ? NaN : postgresServerCpuSince(database);
  await dispatcher.stop();
  return {
    rate: (options.events / elapsed) * 1000,
    cpuMicros: (used.user + used.system) / options.events,
    mainMicros: (busy.active * 1000) / options.events,
    receiverMicros: receiverUsed / options.events,
    databaseMicros: databaseUsed / options.events,
  };
}

/** Complete chat posts by concurrent writers while the engine sends: end to end. */
export async function parleyBurst(
  side: ParleySide,
  options: Pick<DeliveryBenchOptions, "events" | "writers">,
  make: MakeDispatcher = defaultDispatcher,
): Promise<BurstResult> {
  const { ctx } = side.target;
  const { receiver } = side;
  const dispatcher = await make(ctx);
  dispatcher.start();
  const commits = new Map<string, number>();
  const base = receiver.count;
  const start = clock();
  await inParallel(options.events, options.writers, async () => {
    const id = await postOne(ctx, side.room);
    commits.set(`m${id}`, clock());
  });
  const committed = clock();
  await receiver.waitFor(base + options.events, 300_000);
  const last = Math.max(...[...commits.keys()].map((key) => receiver.arrivals.get(key) ?? 0));
  await dispatcher.stop();
  const lat = latencies(commits, receiver.arrivals);
  for (const key of commits.keys()) receiver.arrivals.delete(key);
  return {
    rate: (options.events / (last - start)) * 1000,
    commitRate: (options.events / (committed - start)) * 1000,
    p50: percentile(lat, 50),
    p99: percentile(lat, 99),
  };
}

interface Participant {
  label: string;
  warm(): Promise<void>;
  drain(round: number): Promise<DrainResult>;
  burst(round: number): Promise<BurstResult>;
  drains: DrainResult[];
  bursts: BurstResult[];
}

function parleyParticipant(side: ParleySide, options: DeliveryBenchOptions): Participant {
  return {
    label: `Parley on ${side.target.name}`,
    warm: () => warmUp(side, options.writers),
    drain: (round) => parleyDrain(side, `drain-r${round}`, options),
    burst: () => parleyBurst(side, options),
    drains: [],
    bursts: [],
  };
}

function graphileParticipant(
  peer: GraphilePeer,
  version: string,
  options: DeliveryBenchOptions,
): Participant {
  const keys = (what: string, round: number) =>
    Array.from({ length: options.events }, (_, i) => `gw-${peer.mode}-${what}-r${round}-${i}`);
  return {
    label: `graphile-worker ${version}, ${peer.mode}`,
    warm: () => peer.warm(),
    drain: (round) => peer.drain(keys("drain", round)),
    async burst(round) {
      const result = await peer.burst(keys("burst", round), options.writers);
      return {
        rate: result.rate,
        commitRate: result.insertRate,
        p50: percentile(result.latencies, 50),
        p99: percentile(result.latencies, 99),
      };
    },
    drains: [],
    bursts: [],
  };
}

function bullMqParticipant(
  peer: BullMqPeer,
  version: string,
  options: DeliveryBenchOptions,
): Participant {
  const keys = (what: string, round: number) =>
    Array.from({ length: options.events }, (_, i) => `bq-${peer.mode}-${what}-r${round}-${i}`);
  return {
    label: `BullMQ ${version}, Redis ${peer.mode === "aof" ? "append-only" : "in memory"}`,
    warm: () => peer.warm(),
    async drain(round) {
      const result = await peer.drain(keys("drain", round));
      return {
        rate: result.rate,
        cpuMicros: result.cpuMicros,
        serverCpuMicros: result.redisCpuMicros,
      };
    },
    async burst(round) {
      const result = await peer.burst(keys("burst", round), options.writers);
      return {
        rate: result.rate,
        commitRate: result.insertRate,
        p50: percentile(result.latencies, 50),
        p99: percentile(result.latencies, 99),
      };
    },
    drains: [],
    bursts: [],
  };
}

/**
 * Posts at a fixed rate for `seconds`, each on its own schedule (a slow commit does not hold back
 * the next); commit-to-arrival latency, and this process's RSS every 5 s. The bench's own
 * bookkeeping is bounded (latencies in a preallocated array, matched keys dropped) so the RSS
 * series shows the server code's memory, not the benchmark's.
 */
async function steadyRun(side: ParleySide, options: DeliveryBenchOptions): Promise<void> {
  const { ctx } = side.target;
  const { receiver } = side;
  const perSecond = options.steadyRate;
  const total = Math.round(perSecond * options.steadySeconds);
  const dispatcher = await newDispatcher(ctx);
  dispatcher.start();
  const commits = new Map<string, number>();
  const lat = new Float64Array(total);
  let matched = 0;
  const match = () => {
    for (const [key, committed] of commits) {
      const arrived = receiver.arrivals.get(key);
      if (arrived === undefined) continue;
      lat[matched++] = arrived - committed;
      commits.delete(key);
      receiver.arrivals.delete(key);
    }
  };
  const samples: Array<{ at: number; rssMb: number }> = [];
  const heapBefore = liveHeapMb();
  const start = clock();
  const sampler = setInterval(() => {
    match();
    samples.push({ at: (clock() - start) / 1000, rssMb: process.memoryUsage.rss() / 2 ** 20 });
  }, RSS_SAMPLE_MS);
  const base = receiver.count;
  let inFlight = 0;
  let failed = 0;
  let lastCommit = start;
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / perSecond - clock();
    if (wait > 1) await sleep(wait);
    inFlight++;
    postOne(ctx, side.room)
      .then((id) => {
        lastCommit = clock();
        commits.set(`m${id}`, lastCommit);
      })
      .catch(() => failed++)
      .finally(() => inFlight--);
  }
  while (inFlight > 0) await sleep(5);
  const deadline = clock() + 120_000;
  for (match(); commits.size > 0 && clock() < deadline; match()) await sleep(20);
  clearInterval(sampler);
  await dispatcher.stop();
  const heapAfter = liveHeapMb();
  // At least once: a delivery may arrive twice (it is counted, not matched, the second time).
  const duplicates = receiver.count - base - matched;
  const sorted = Array.from(lat.subarray(0, matched)).sort((a, b) => a - b);
  const achieved = (total / (lastCommit - start)) * 1000;
  console.log(
    `  steady ${perSecond} posts/s for ${options.steadySeconds} s (${rate(achieved)}/s committed): ` +
      `commit -> arrival p50 ${ms(percentile(sorted, 50))}, p99 ${ms(percentile(sorted, 99))}, ` +
      `max ${ms(sorted.at(-1) ?? NaN)} (${matched} of ${total} arrived` +
      `${duplicates ? `, ${duplicates} twice` : ""}${failed ? `, ${failed} posts FAILED` : ""})`,
  );
  if (samples.length === 0) return;
  console.log(
    `    RSS every ${RSS_SAMPLE_MS / 1000} s (MB): ${samples.map((s) => s.rssMb.toFixed(0)).join(" ")}`,
  );
  // After warm-up: the sample at 15 s when the run is long enough for one, else the first.
  const warm = samples.find((s) => s.at >= 14.5 && options.steadySeconds >= 30) ?? samples[0]!;
  const last = samples.at(-1)!;
  const growth = last.rssMb - warm.rssMb;
  const grew = growth > 10 && growth / warm.rssMb > 0.1;
  // The series is a saw-tooth (garbage collections): the peak shows how far one tooth reaches.
  const peak = Math.max(...samples.filter((s) => s.at >= warm.at).map((s) => s.rssMb));
  console.log(
    `    RSS after warm-up: ${warm.rssMb.toFixed(0)} MB at ${warm.at.toFixed(0)} s -> ${last.rssMb.toFixed(0)} MB ` +
      `at ${last.at.toFixed(0)} s (${growth >= 0 ? "+" : ""}${growth.toFixed(1)} MB; peak ${peak.toFixed(0)} MB): ` +
      `${grew ? "rose (more than 10% and 10 MB; the collector's timing or a leak: see the live heap)" : "flat"}`,
  );
  // RSS moves with the garbage collector's timing; what the run left alive is the leak test.
  const kept = heapAfter - heapBefore;
  console.log(
    `    live heap after a full GC: ${heapBefore.toFixed(1)} MB before the run -> ${heapAfter.toFixed(1)} MB after ` +
      `(${kept >= 0 ? "+" : ""}${kept.toFixed(1)} MB; target: no growth after warm-up) ${kept > 10 ? "MISSED" : "met"}`,
  );
}

/** The JavaScript heap still alive after a full collection, in MB. */
function liveHeapMb(): number {
  fullGc();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

let gcFunction: (() => void) | undefined;
function fullGc(): void {
  if (!gcFunction) {
    v8.setFlagsFromString("--expose-gc");
    gcFunction = vm.runInNewContext("gc") as () => void;
  }
  gcFunction();
}

/** The endpoint settings each variant drains with, against "plain" (parley signature, nothing more). */
type Variant = "plain" | "operated" | "cloudevents" | "cloudevents-binary" | "traced" | "exported";
const VARIANTS: readonly Variant[] = [
  "plain",
  "operated",
  "cloudevents",
  "cloudevents-binary",
  "traced",
  "exported",
];
/**
 * The order of the variants in each round: a Williams square, so that over six rounds each
 * variant drains once in every position and comes right after every other variant once (a drain
 * leaves work behind, such as the OTLP exporter's batches; a rotation would give each variant
 * the same predecessor every round).
 */
const WILLIAMS_ORDERS: readonly (readonly number[])[] = [0, 1, 2, 3, 4, 5].map((shift) =>
  [0, 1, 5, 2, 4, 3].map((i) => (i + shift) % VARIANTS.length),
);
/** What each variant must keep of the plain rate (docs/performance.md). */
const VARIANT_TARGETS: Record<Exclude<Variant, "plain">, { label: string; target: number }> = {
  operated: { label: "signatureScheme both + 3 custom headers", target: 0.9 },
  cloudevents: { label: "payloadFormat cloudevents", target: 0.95 },
  "cloudevents-binary": { label: "payloadFormat cloudevents-binary", target: 0.95 },
  traced: { label: "traceContext true (no exporter)", target: 0.97 },
  exported: { label: "traceContext true + OTLP export of each attempt's span", target: 0.85 },
};

/**
 * What endpoint features cost per delivery, each drained side by side with the same endpoint
 * plain: signing with both schemes (two HMACs, one of them made per attempt) and 3 custom headers
 * (decrypted per delivery); each CloudEvents format (the envelope re-shaped per attempt);
 * traceContext (a traceparent per attempt); and traceContext with OpenTelemetry exporting each
 * attempt's webhook.deliver span to a local OTLP/HTTP receiver. `rounds` rounds, each running every
 * variant in the order of WILLIAMS_ORDERS (a drain runs on a table the earlier ones grew), medians of the rates
 * and of the CPU per delivery, so the machine's other load weighs on all alike; and the median of
 * each round's own ratio to plain (paired in time, so a slow minute weighs on both sides of it).
 */
async function featureOverhead(side: ParleySide, events: number, rounds: number): Promise<void> {
  const { ctx } = side.target;
  // The main endpoint steps aside: only this one receives.
  await ctx.db
    .updateTable("webhooks")
    .set({ enabled: 0 })
    .where("id", "=", side.endpointId)
    .execute();
  const receiver = await startReceiver();
  const collector = await startReceiver();
  const tracing = (await startOpenTelemetry({
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: collector.url,
  }))!;
  const endpointId = await addEndpoint(ctx, receiver.url, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  const headers = sealSecret(
    ctx.keys.secretKey,
    JSON.stringify({
      authorization: "Bearer bench-token-1234",
      "x-tenant": "acme",
      "x-env": "bench",
    }),
  );
  const settings = (variant: Variant) => ({
    signature_scheme: variant === "operated" ? ("both" as const) : ("parley" as const),
    headers_ciphertext: variant === "operated" ? headers : null,
    payload_format:
      variant === "cloudevents" || variant === "cloudevents-binary" ? variant : ("parley" as const),
    trace_context: variant === "traced" || variant === "exported" ? (1 as const) : (0 as const),
  });
  const runs = new Map<Variant, number[]>(VARIANTS.map((v) => [v, []]));
  const cpu = new Map<Variant, number[]>(VARIANTS.map((v) => [v, []]));
  const profiler = await drainProfiler();
  for (let round = 0; round < rounds; round++) {
    const order = WILLIAMS_ORDERS[round % WILLIAMS_ORDERS.length]!.map((i) => VARIANTS[i]!);
    for (const variant of order) {
      await ctx.db
        .updateTable("webhooks")
        .set(settings(variant))
        .where("id", "=", endpointId)
        .execute();
      await inParallel(events, 16, (i) => emit(ctx, `${variant}-${round}-${i}`));
      // As before every drain (parleyDrain): the statistics and the dead rows of the drains before.
      if (ctx.dialect === "postgres")
        await sql`VACUUM ANALYZE webhook_deliveries, webhook_attempts`.execute(ctx.db);
      const dispatcher = await newDispatcher(variant === "exported" ? { ...ctx, tracing } : ctx);
      const base = receiver.count;
      await profiler?.start();
      const start = clock();
      const used = process.cpuUsage();
      dispatcher.start();
      await receiver.waitFor(base + events, 120_000);
      runs.get(variant)!.push((events / (clock() - start)) * 1000);
      const { user, system } = process.cpuUsage(used);
      cpu.get(variant)!.push((user + system) / events);
      await profiler?.stop(`${ctx.dialect}-${variant}-${round}`);
      await dispatcher.stop();
    }
  }
  await tracing.shutdown();
  await receiver.close();
  await collector.close();
  const plainRate = median(runs.get("plain")!);
  const plainCpu = median(cpu.get("plain")!);
  console.log(
    `  plain endpoint: ${rate(plainRate)} deliveries/s, CPU ${plainCpu.toFixed(0)} µs per delivery (medians of ${rounds} rounds)`,
  );
  for (const [variant, { label, target }] of Object.entries(VARIANT_TARGETS)) {
    const rates = runs.get(variant as Variant)!;
    const ratio = median(rates) / plainRate;
    const paired = median(rates.map((r, round) => r / runs.get("plain")![round]!));
    const used = median(cpu.get(variant as Variant)!);
    console.log(
      `  ${label}: ${rate(median(rates))} deliveries/s -> ${pct(ratio)} of plain ` +
        `(target >= ${pct(target)}) ${ratio >= target ? "met" : "MISSED"}; round by round ${pct(paired)}; ` +
        `CPU ${used.toFixed(0)} µs per delivery (${pct(plainCpu / used)} of the plain rate at equal CPU)`,
    );
  }
}

const verdict = (ok: boolean) => (ok ? "met" : "MISSED");

function printSummary(
  options: DeliveryBenchOptions,
  bare: Array<{ rate: number; cpuMicros: number }>,
  participants: Participant[],
): void {
  const bareRate = median(bare.map((b) => b.rate));
  const bareCpu = median(bare.map((b) => b.cpuMicros));
  const [l1, l5] = process.platform === "linux" ? osLoad() : [NaN, NaN];
  console.log(
    `\ndelivery, medians of ${options.rounds} round(s): ${options.events} per drain and burst, one endpoint, ` +
      `16 in flight, ${options.writers} writers (load average ${l1.toFixed(1)} / ${l5.toFixed(1)})`,
  );
  console.log(
    `  ${"".padEnd(36)} ${"drain/s".padStart(8)} ${"µs CPU".padStart(7)} ${"of bare".padStart(8)}` +
      ` ${"burst/s".padStart(8)} ${"of bare".padStart(8)} ${"commits/s".padStart(9)} ${"p50".padStart(8)} ${"p99".padStart(9)}`,
  );
  console.log(
    `  ${"bare undici POST loop (the limit)".padEnd(36)} ${rate(bareRate).padStart(8)} ${rate(bareCpu).padStart(7)} ${"100%".padStart(8)}`,
  );
  const summary = new Map<string, { drain: number; burst: number }>();
  for (const p of participants) {
    const drain = median(p.drains.map((d) => d.rate));
    const cpu = median(p.drains.map((d) => d.cpuMicros));
    const server = p.drains.some((d) => d.serverCpuMicros !== undefined)
      ? `+${rate(median(p.drains.map((d) => d.serverCpuMicros ?? NaN)))}`
      : "";
    const burst = median(p.bursts.map((b) => b.rate));
    summary.set(p.label, { drain, burst });
    console.log(
      `  ${p.label.padEnd(36)} ${rate(drain).padStart(8)} ${`${rate(cpu)}${server}`.padStart(7)} ${pct(drain / bareRate).padStart(8)}` +
        ` ${rate(burst).padStart(8)} ${pct(burst / bareRate).padStart(8)}` +
        ` ${rate(median(p.bursts.map((b) => b.commitRate))).padStart(9)}` +
        ` ${ms(median(p.bursts.map((b) => b.p50))).padStart(8)} ${ms(median(p.bursts.map((b) => b.p99))).padStart(9)}`,
    );
  }
  console.log(
    "  (Parley's burst: complete chat posts; the peers': bare job inserts. CPU: this process per drained delivery, +Redis's own for BullMQ)",
  );
  const sqlite = summary.get("Parley on SQLite");
  const postgres = summary.get("Parley on PostgreSQL");
  const batched = [...summary].find(([label]) => label.endsWith("batched"))?.[1];
  const plain = [...summary].find(([label]) => label.endsWith("plain"))?.[1];
  const bullMemory = [...summary].find(([label]) => label.endsWith("in memory"))?.[1];
  if (sqlite && bullMemory) {
    const vsBull = sqlite.drain / bullMemory.drain;
    console.log(
      `  SQLite drain = ${pct(vsBull)} of BullMQ's with Redis in memory (target >= 100%) ${verdict(vsBull >= 1)}`,
    );
  }
  if (sqlite) {
    const e2e = sqlite.burst / bareRate;
    console.log(
      `  SQLite end to end (burst) = ${pct(e2e)} of the bare loop (target >= 50%) ${verdict(e2e >= 0.5)}`,
    );
  }
  if (sqlite && postgres) {
    const drain = postgres.drain / sqlite.drain;
    const burst = postgres.burst / sqlite.burst;
    console.log(
      `  PostgreSQL drain = ${pct(drain)} of SQLite's (target >= 80%) ${verdict(drain >= 0.8)}; ` +
        `burst = ${pct(burst)} of SQLite's (target >= 50%) ${verdict(burst >= 0.5)}`,
    );
  }
  if (postgres && batched && plain) {
    const vsBatched = postgres.drain / batched.drain;
    console.log(
      `  PostgreSQL drain = ${pct(vsBatched)} of batched graphile-worker's (target >= 100%) ${verdict(vsBatched >= 1)}, ` +
        `${pct(postgres.drain / plain.drain)} of plain; burst = ${pct(postgres.burst / batched.burst)} of batched, ` +
        `${pct(postgres.burst / plain.burst)} of plain`,
    );
  }
}

function osLoad(): [number, number] {
  const [one = NaN, five = NaN] = os.loadavg();
  return [one, five];
}

export async function runDeliveryBench(
  options: DeliveryBenchOptions = DELIVERY_DEFAULTS,
): Promise<void> {
  const url = benchDatabaseUrl();
  if (!url) console.log("(PostgreSQL skipped: set PARLEY_TEST_DATABASE_URL or DATABASE_URL)");
  const sides: ParleySide[] = [];
  const peers: GraphilePeer[] = [];
  const bullPeers: BullMqPeer[] = [];
  try {
    sides.push(await openParleySide(openSqliteTarget));
    if (url) sides.push(await openParleySide(() => openPostgresTarget(url)));
    if (options.sendThreads !== undefined)
      for (const side of sides) side.target.ctx.config.webhookSendThreads = options.sendThreads;
    // The queue comparison (Parley and its peers, drains and bursts), unless only the
    // endpoint-feature drains were asked for.
    if (!options.variantsOnly) {
      const concurrency = Math.min(
        sides[0]!.target.ctx.config.webhookConcurrency,
        sides[0]!.target.ctx.config.webhookPerEndpointConcurrency,
      );
      const participants = sides.map((side) => parleyParticipant(side, options));
      if (url) {
        const version = (
          createRequire(import.meta.url)("graphile-worker/package.json") as { version: string }
        ).version;
        const receiver = sides.at(-1)!.receiver;
        for (const mode of ["plain", "batched"] as const) {
          const peer = await openGraphilePeer({ databaseUrl: url, receiver, concurrency, mode });
          peers.push(peer);
          participants.push(graphileParticipant(peer, version, options));
        }
      }

      if (hasRedisServer()) {
        const version = (
          createRequire(import.meta.url)("bullmq/package.json") as { version: string }
        ).version;
        for (const mode of ["memory", "aof"] as const) {
          const peer = await openBullMqPeer({ receiver: sides[0]!.receiver, concurrency, mode });
          bullPeers.push(peer);
          participants.push(bullMqParticipant(peer, version, options));
        }
      } else console.log("(BullMQ skipped: redis-server is not on PATH)");

      for (const p of participants) await p.warm();
      const bare: Array<{ rate: number; cpuMicros: number }> = [];
      for (let round = 0; round < options.rounds; round++) {
        // Each round starts with a different participant, so none always gets the warmer machine.
        const order = participants.map((_, i) => participants[(i + round) % participants.length]!);
        for (const p of order) {
          const drain = await p.drain(round);
          const burst = await p.burst(round);
          p.drains.push(drain);
          p.bursts.push(burst);
          console.log(
            `  round ${round + 1} ${p.label.padEnd(36)} drain ${rate(drain.rate).padStart(6)}/s, ` +
              `burst ${rate(burst.rate).padStart(6)}/s (commits ${rate(burst.commitRate)}/s, p99 ${ms(burst.p99)})`,
          );
        }
        const receiver = sides[0]!.receiver;
        const before = receiver.count;
        const b = await barePostRate(receiver.url, concurrency, options.events);
        // Arrivals are reported every 5 ms: count them all before anything else measures.
        await receiver.waitFor(before + options.events, 30_000);
        bare.push(b);
        console.log(`  round ${round + 1} ${"bare undici POST loop".padEnd(36)} ${rate(b.rate)}/s`);
      }
      printSummary(options, bare, participants);
    }

    for (const side of sides) {
      console.log(`\n${side.target.name}`);
      if (options.steadySeconds > 0 && !options.variantsOnly) await steadyRun(side, options);
      await featureOverhead(side, Math.min(options.events, 3_000), options.variantRounds);
    }
  } finally {
    for (const peer of peers) await peer.close();
    for (const peer of bullPeers) await peer.close();
    for (const side of sides) {
      await side.receiver.close();
      await side.target.cleanup();
    }
  }
}

/** Options from the command line (`--quick` first, then the flags given). */
export function deliveryOptionsFrom(values: {
  quick?: boolean | undefined;
  events?: string | undefined;
  rounds?: string | undefined;
  writers?: string | undefined;
  "steady-seconds"?: string | undefined;
  "steady-rate"?: string | undefined;
  "variant-rounds"?: string | undefined;
  "variants-only"?: boolean | undefined;
  "send-threads"?: string | undefined;
}): DeliveryBenchOptions {
  const base = values.quick ? DELIVERY_QUICK : DELIVERY_DEFAULTS;
  return {
    events: numberOption(values.events, base.events),
    rounds: numberOption(values.rounds, base.rounds),
    writers: numberOption(values.writers, base.writers),
    steadySeconds: numberOption(values["steady-seconds"], base.steadySeconds),
    steadyRate: numberOption(values["steady-rate"], base.steadyRate),
    variantRounds: numberOption(values["variant-rounds"], base.variantRounds),
    variantsOnly: values["variants-only"] === true,
    sendThreads:
      values["send-threads"] === undefined ? undefined : numberOption(values["send-threads"], 0),
  };
}

export const DELIVERY_FLAGS = {
  events: { type: "string" },
  rounds: { type: "string" },
  writers: { type: "string" },
  "steady-seconds": { type: "string" },
  "steady-rate": { type: "string" },
  "variant-rounds": { type: "string" },
  "variants-only": { type: "boolean" },
  "send-threads": { type: "string" },
} as const;

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { ...DELIVERY_FLAGS, quick: { type: "boolean" } } });
  await runDeliveryBench(deliveryOptionsFrom(values));
}
