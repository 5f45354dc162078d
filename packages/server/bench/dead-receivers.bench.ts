/**
 * Dead receivers: how endpoints that never answer, or answer 500, hold back the deliveries to the
 * healthy ones. Per database, three configurations side by side in one run, each on a fresh
 * `parley serve` process and database:
 *
 *   all healthy                 200 endpoints answering 204 (the baseline);
 *   20 hanging + 20 failing     160 healthy, 20 that accept the request and never answer, 20 that
 *                               answer 500;
 *   100 hanging                 100 healthy, 100 that never answer.
 *
 * Method. The server is `parley serve` in a child process, run from this checkout's source
 * (src/cli.ts through tsx, so the engine measured is the one in the tree at run time), with every
 * webhook setting at its default (concurrency, per-endpoint limit, the 30 s time-out, retries),
 * logging at warn. Only what a loopback receiver needs is set (PARLEY_WEBHOOK_ALLOW_HTTP and
 * _ALLOW_PRIVATE_NETWORKS), and no PARLEY_* setting of the caller's shell reaches it; --quick also
 * sets PARLEY_WEBHOOK_TIMEOUT_MS=5000. The receivers run in one other child process: 200 HTTP
 * servers, one per endpoint (so each endpoint is an origin of its own, with its own connection
 * pool in the sender, as distinct receivers would be), at /ok/N, /hang/N and /fail/N. A hanging
 * one reads the request and never answers; its sockets are kept until the configuration ends and
 * are destroyed then. The kinds are spread evenly over the endpoint ids (ids 10, 20, ... hang and
 * 5, 15, ... fail; with 100 hanging, every even id). Through the HTTP API: the first admin's
 * token (from the banner), a room, the 200 endpoints (MESSAGE_CREATED, default signature scheme),
 * the dead ones created disabled. A warm-up of 10 posts delivered to the healthy ones (not
 * counted; a shortfall after 60 s is printed, with what the delivery log says of some of the
 * missing ones, and the run goes on), then the dead ones are enabled and 300 chat posts (POST /api/rooms/:id/messages) go
 * out at 5/s, each on its own schedule. Each healthy delivery is keyed by its endpoint and the
 * message id in its body (a repeat counts as a duplicate, not an arrival); its latency runs from
 * the post's answer to its arrival at the receiver (one wall clock on one machine). The wait ends
 * when every healthy delivery has arrived (plus one more sample), or 150 s after the last post's
 * answer (--wait-seconds). A delivery still missing counts as longer than the wait in the
 * percentiles. Every 5 s: the server's RSS (/proc), and the slots held: at the receivers, the
 * requests received and not yet answered or dropped, and the open connections, per kind; and
 * from the server's /metrics, every parley_webhook_* series whose name speaks of slots, sends in
 * flight or in use, breakers, circuits or time-outs, plus the attempts that ended in a time-out
 * (what the engine exposes at run time; a series absent from a sample was not reported then).
 *
 * Targets, against the all-healthy run on the same database: every healthy delivery arrives
 * within 5 s of the last post; the healthy p99 is at most twice the all-healthy p99.
 *
 * SQLite always (a data dir in a temp dir); PostgreSQL too when PARLEY_TEST_DATABASE_URL or
 * DATABASE_URL is set (a schema of its own per configuration, bench_dead_*, dropped after).
 * Run: npm run bench -w @parley/server -- --only dead-receivers [--quick], or
 *   npx tsx bench/dead-receivers.bench.ts [--messages 300] [--rate 5] [--wait-seconds 150]
 *     [--timeout-ms 30000] [--quick]
 * About 9 minutes per database while the hanging configurations miss (each waits the full 150 s),
 * about 4 once they do not; --quick (60 posts, 5 s time-out, 20 s wait) about 2 per database.
 */
import { fork, spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import { Agent, request } from "undici";
import { benchDatabaseUrl } from "./bench-targets.js";
import { numberOption } from "./number-option.js";
import { inParallel } from "./in-parallel.js";

export interface DeadReceiversOptions {
  /** Chat posts per configuration (measured; the warm-up is apart). */
  messages: number;
  /** Posts per second. */
  rate: number;
  /** Longest wait for the healthy deliveries after the last post, in seconds. */
  waitSeconds: number;
  /** PARLEY_WEBHOOK_TIMEOUT_MS of the server; undefined: its default (30 s). */
  timeoutMs: number | undefined;
}

export const DEAD_RECEIVERS_DEFAULTS: DeadReceiversOptions = {
  messages: 300,
  rate: 5,
  waitSeconds: 150,
  timeoutMs: undefined,
};

/** For development: 60 posts, a 5 s time-out, a 20 s wait. */
export const DEAD_RECEIVERS_QUICK: DeadReceiversOptions = {
  messages: 60,
  rate: 5,
  waitSeconds: 20,
  timeoutMs: 5_000,
};

const ENDPOINTS = 200;
const WARMUP_MESSAGES = 10;
const SAMPLE_MS = 5_000;
/** Target 1: every healthy delivery within this long after the last post. */
const LAST_ARRIVAL_TARGET_MS = 5_000;
/** Target 2: healthy p99 at most this many times the all-healthy p99. */
const P99_RATIO_TARGET = 2;
const SECRET = "bench-secret-0123456789";

type Kind = "ok" | "hang" | "fail";
const KINDS: readonly Kind[] = ["ok", "hang", "fail"];

interface Scenario {
  label: string;
  hanging: number;
  failing: number;
}

const SCENARIOS: readonly Scenario[] = [
  { label: "all healthy", hanging: 0, failing: 0 },
  { label: "20 hanging + 20 failing", hanging: 20, failing: 20 },
  { label: "100 hanging", hanging: 100, failing: 0 },
];

/** `count` of `n` positions, spread evenly; `phase` (0 to 1) shifts them within their period. */
function spread(n: number, count: number, phase = 0): boolean[] {
  const shift = Math.floor(phase * n);
  return Array.from(
    { length: n },
    (_, i) => Math.floor(((i + 1) * count + shift) / n) > Math.floor((i * count + shift) / n),
  );
}

/**
 * The kind of each endpoint, by index: the hanging ones spread over all, the failing ones over
 * the rest, half a period away (with 20 + 20 of 200: ids 10, 20, ... hang and 5, 15, ... fail;
 * with 100 hanging: every even id).
 */
export function endpointKinds(n: number, hanging: number, failing: number): Kind[] {
  const kinds: Kind[] = spread(n, hanging).map((hangs) => (hangs ? "hang" : "ok"));
  const rest = kinds.flatMap((kind, i) => (kind === "ok" ? [i] : []));
  const fails = spread(rest.length, failing, 0.5);
  rest.forEach((index, j) => {
    if (fails[j]) kinds[index] = "fail";
  });
  return kinds;
}

const clock = () => performance.timeOrigin + performance.now();

// ---------------------------------------------------------------- receivers

type PerKind = Record<Kind, number>;

interface ReceiverStats {
  /** Open connections. */
  open: PerKind;
  /** Requests received and neither answered nor dropped yet: the sender's slots held there. */
  held: PerKind;
  /** Requests received in all. */
  requests: PerKind;
}

interface Receivers {
  /** The base URL of each endpoint's server, by index. */
  urls: string[];
  pid: number;
  stats(): Promise<ReceiverStats>;
  /** Closes the sockets the hanging servers keep (the sender's attempts on them fail). */
  destroyHanging(): Promise<void>;
  close(): Promise<void>;
}

/**
 * One process with a server per endpoint. Healthy ones answer 204 and report [endpoint index,
 * messageId, arrival time] in batches every 20 ms; failing ones answer 500; hanging ones read the
 * request and never answer.
 */
const RECEIVERS_SOURCE = `
  const http = require("node:http");
  const clock = () => performance.timeOrigin + performance.now();
  const zero = () => ({ ok: 0, hang: 0, fail: 0 });
  const open = zero(), held = zero(), requests = zero();
  const hangingSockets = new Set();
  let batch = [];
  function serve(index, kind) {
    const server = http.createServer((req, res) => {
      requests[kind]++;
      held[kind]++;
      let done = false;
      res.on("close", () => { if (!done) { done = true; held[kind]--; } });
      if (kind === "hang") { req.resume(); return; }
      const chunks = [];
      req.on("data", (chunk) => chunks.push(chunk));
      req.on("end", () => {
        if (kind === "fail") {
          res.writeHead(500, { "content-type": "text/plain" }).end("receiver failing");
          return;
        }
        const at = clock();
        const m = /"messageId":([0-9]+)/.exec(Buffer.concat(chunks).toString("utf8"));
        if (m) batch.push(index, Number(m[1]), at);
        res.writeHead(204).end();
      });
    });
    server.keepAliveTimeout = 60000;
    server.on("connection", (socket) => {
      open[kind]++;
      if (kind === "hang") hangingSockets.add(socket);
      socket.on("close", () => { open[kind]--; hangingSockets.delete(socket); });
    });
    return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server.address().port)));
  }
  setInterval(() => {
    if (batch.length) { process.send({ type: "arrivals", data: batch }); batch = []; }
  }, 20).unref();
  process.on("message", async (message) => {
    if (message.type === "start") {
      const ports = [];
      for (let i = 0; i < message.kinds.length; i++) ports.push(await serve(i, message.kinds[i]));
      process.send({ type: "ready", ports });
    } else if (message.type === "stats") {
      process.send({ type: "stats", id: message.id, open, held, requests });
    } else if (message.type === "destroy-hanging") {
      for (const socket of hangingSockets) socket.destroy();
      process.send({ type: "destroyed", id: message.id });
    }
  });
  process.on("disconnect", () => process.exit(0));
`;

type ReceiverMessage =
  | { type: "ready"; ports: number[] }
  | { type: "arrivals"; data: number[] }
  | ({ type: "stats"; id: number } & ReceiverStats)
  | { type: "destroyed"; id: number };

async function startReceivers(
  kinds: readonly Kind[],
  onArrivals: (data: number[]) => void,
): Promise<Receivers> {
  const child = fork("-e", [RECEIVERS_SOURCE], {
    execArgv: [],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const replies = new Map<number, (message: ReceiverMessage) => void>();
  let nextId = 0;
  const ask = (type: "stats" | "destroy-hanging") =>
    new Promise<ReceiverMessage>((resolve) => {
      const id = nextId++;
      replies.set(id, resolve);
      child.send({ type, id });
    });
  const ports = await new Promise<number[]>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`the receivers exited (${code})`)));
    child.on("message", (message: ReceiverMessage) => {
      if (message.type === "ready") resolve(message.ports);
      else if (message.type === "arrivals") onArrivals(message.data);
      else {
        replies.get(message.id)?.(message);
        replies.delete(message.id);
      }
    });
    child.send({ type: "start", kinds });
  });
  return {
    urls: ports.map((port) => `http://127.0.0.1:${port}`),
    pid: child.pid!,
    async stats() {
      const { open, held, requests } = (await ask("stats")) as ReceiverStats;
      return { open, held, requests };
    },
    async destroyHanging() {
      await ask("destroy-hanging");
    },
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.disconnect();
      await exited;
    },
  };
}

// ---------------------------------------------------------------- the server

const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));
const CLI_SOURCE = path.join(PACKAGE_DIR, "src", "cli.ts");

interface Parley {
  url: string;
  token: string;
  pid: number;
  /** The last part of what it printed (warnings, errors). */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs: number): Promise<void>;
}

/** The environment without the caller's Parley settings (the server runs on its defaults). */
function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || name.startsWith("PARLEY_") || name === "DATABASE_URL") continue;
    env[name] = value;
  }
  return env;
}

async function startParley(settings: Record<string, string>): Promise<Parley> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", CLI_SOURCE, "serve"], {
    cwd: PACKAGE_DIR,
    env: { ...baseEnv(), ...settings },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-16_384);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const stop = (graceMs: number) =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const kill = setTimeout(() => child.kill("SIGKILL"), graceMs);
      child.once("exit", () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill("SIGTERM");
    });
  try {
    const { url, token } = await new Promise<{ url: string; token: string }>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`parley serve did not start in 60 s; it printed:\n${output}`)),
        60_000,
      );
      const check = () => {
        const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
        const token = /^Admin token: (\S+)$/m.exec(output)?.[1];
        if (url && token) {
          clearTimeout(timer);
          resolve({ url, token });
        }
      };
      child.stdout!.on("data", check);
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`parley serve exited (${signal ?? code}); it printed:\n${output}`));
      });
    });
    return { url, token, pid: child.pid!, output: () => output, stop };
  } catch (error) {
    await stop(0);
    throw error;
  }
}

const agent = new Agent({ keepAliveTimeout: 60_000 });

async function api<T>(
  parley: Parley,
  method: "GET" | "POST" | "PATCH",
  route: string,
  body?: unknown,
): Promise<T> {
  const res = await request(`${parley.url}${route}`, {
    dispatcher: agent,
    method,
    headers: {
      authorization: `Bearer ${parley.token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${route}: ${res.statusCode} ${text}`);
  return JSON.parse(text) as T;
}

/** What the delivery log says of up to `limit` healthy deliveries that have not arrived. */
async function describeMissing(
  parley: Parley,
  messageIds: number[],
  healthyIndexes: number[],
  endpointIds: number[],
  arrivals: Map<number, Float64Array>,
  limit: number,
): Promise<void> {
  let shown = 0;
  for (const messageId of messageIds) {
    for (const index of healthyIndexes) {
      if (shown >= limit) return;
      if (!Number.isNaN(arrivals.get(messageId)?.[index] ?? NaN)) continue;
      shown++;
      const webhookId = endpointIds[index]!;
      try {
        const page = await api<{ items: Array<Record<string, unknown>> }>(
          parley,
          "GET",
          `/api/admin/deliveries?webhookId=${webhookId}&messageId=${messageId}`,
        );
        const d = page.items[0];
        console.log(
          `      endpoint ${webhookId}, message ${messageId}: ` +
            (d
              ? `delivery ${String(d.id)} ${String(d.status)}, ${String(d.attempts)} attempt(s), ` +
                `last response ${String(d.lastResponseStatus)}, next attempt ${String(d.nextAttemptAt)}`
              : "no delivery row"),
        );
      } catch (error) {
        console.log(`      endpoint ${webhookId}, message ${messageId}: ${String(error)}`);
      }
    }
  }
}

// ---------------------------------------------------------------- samples

interface Sample {
  /** Seconds since the first measured post. */
  at: number;
  rssMb: number;
  receivers: ReceiverStats;
  /** The slot, breaker and time-out series of /metrics (name without parley_webhook_). */
  metrics: Map<string, number>;
  healthyArrived: number;
}

/** RSS and its high-water mark of a process, in MB (Linux; NaN elsewhere). */
function processMemory(pid: number): { rssMb: number; peakMb: number } {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(status)?.[1]);
    return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024 };
  } catch {
    return { rssMb: NaN, peakMb: NaN };
  }
}

/** The series worth following in the server's /metrics, and its RSS gauge. */
function pickMetrics(text: string): { series: Map<string, number>; rssMb: number } {
  const series = new Map<string, number>();
  let rssMb = NaN;
  const byName = new Map<string, Array<[string, number]>>();
  for (const line of text.split("\n")) {
    if (line.startsWith("#") || !line) continue;
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const [, name = "", labels = "", raw = ""] = match;
    const value = Number(raw);
    if (name === "parley_process_resident_memory_bytes") rssMb = value / 2 ** 20;
    if (!name.startsWith("parley_webhook_") || /_(bucket|sum|count)$/.test(name)) continue;
    const short = name.slice("parley_webhook_".length);
    const wanted =
      /slot|in_flight|in_use|breaker|circuit|timeout|timed_out/.test(short) ||
      (short === "attempts_total" && labels.includes('outcome="timeout"'));
    if (!wanted) continue;
    const list = byName.get(short) ?? [];
    list.push([labels, value]);
    byName.set(short, list);
  }
  for (const [name, list] of byName) {
    // Per endpoint (many label sets) would not fit a line: the total then.
    if (list.length > 8) {
      series.set(
        `${name} (sum of ${list.length})`,
        list.reduce((sum, [, v]) => sum + v, 0),
      );
    } else for (const [labels, value] of list) series.set(`${name}${labels}`, value);
  }
  return { series, rssMb };
}

async function scrapeMetrics(parley: Parley): Promise<string> {
  try {
    const res = await request(`${parley.url}/metrics`, {
      dispatcher: agent,
      signal: AbortSignal.timeout(4_000),
    });
    return await res.body.text();
  } catch {
    return "";
  }
}

// ---------------------------------------------------------------- one configuration

interface Outcome {
  database: string;
  scenario: Scenario;
  healthy: number;
  expected: number;
  arrived: number;
  duplicates: number;
  failedPosts: number;
  /** ms from the last post's answer to the last healthy arrival; undefined when some are missing. */
  lastAfterPostMs: number | undefined;
  /** Sorted; a missing delivery is Infinity. */
  latencies: Float64Array;
  postLatencies: number[];
  peakRssMb: number;
  samples: Sample[];
  /** Attempts the receivers got during the measured part, per kind. */
  requests: PerKind;
  waitedMs: number;
  seconds: number;
}

interface BenchDatabase {
  name: "SQLite" | "PostgreSQL";
  /** The settings of this configuration's server, and what removes its data afterwards. */
  prepare(): Promise<{ settings: Record<string, string>; cleanup(): Promise<void> }>;
}

function sqliteDatabase(): BenchDatabase {
  return {
    name: "SQLite",
    async prepare() {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-dead-"));
      return {
        settings: { PARLEY_DATA_DIR: dataDir },
        async cleanup() {
          fs.rmSync(dataDir, { recursive: true, force: true });
        },
      };
    },
  };
}

function postgresDatabase(url: string): BenchDatabase {
  return {
    name: "PostgreSQL",
    async prepare() {
      const schema = `bench_dead_${crypto.randomBytes(4).toString("hex")}`;
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${schema}`);
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-dead-"));
      const inSchema = new URL(url);
      inSchema.searchParams.set("options", `-c search_path=${schema}`);
      return {
        settings: {
          PARLEY_DATA_DIR: dataDir,
          DATABASE_URL: inSchema.href,
          // PostgreSQL keeps the generated keys in the database, wrapped by a key from outside.
          PARLEY_MASTER_KEY: crypto.randomBytes(32).toString("hex"),
        },
        async cleanup() {
          try {
            await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
          } finally {
            await admin.end();
            fs.rmSync(dataDir, { recursive: true, force: true });
          }
        },
      };
    },
  };
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function runScenario(
  database: BenchDatabase,
  scenario: Scenario,
  options: DeadReceiversOptions,
): Promise<Outcome> {
  const started = clock();
  const kinds = endpointKinds(ENDPOINTS, scenario.hanging, scenario.failing);
  const healthyIndexes = kinds.flatMap((kind, i) => (kind === "ok" ? [i] : []));
  // Arrival time at each endpoint (NaN until it arrives), by message id.
  const arrivals = new Map<number, Float64Array>();
  const warmIds = new Set<number>();
  let warmArrived = 0;
  let arrived = 0;
  let duplicates = 0;
  let lastArrival = 0;
  const onArrivals = (data: number[]) => {
    for (let i = 0; i < data.length; i += 3) {
      const index = data[i]!;
      const messageId = data[i + 1]!;
      const at = data[i + 2]!;
      let row = arrivals.get(messageId);
      if (!row) {
        row = new Float64Array(ENDPOINTS).fill(NaN);
        arrivals.set(messageId, row);
      }
      if (!Number.isNaN(row[index]!)) {
        duplicates++;
        continue;
      }
      row[index] = at;
      if (warmIds.has(messageId)) {
        warmArrived++;
      } else {
        arrived++;
        lastArrival = Math.max(lastArrival, at);
      }
    }
  };

  const { settings, cleanup } = await database.prepare();
  let receivers: Receivers | undefined;
  let parley: Parley | undefined;
  try {
    receivers = await startReceivers(kinds, onArrivals);
    parley = await startParley({
      ...settings,
      PARLEY_PORT: "0",
      PARLEY_HOST: "127.0.0.1",
      PARLEY_LOG_LEVEL: "warn",
      PARLEY_WEBHOOK_ALLOW_HTTP: "true",
      PARLEY_WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
      ...(options.timeoutMs === undefined
        ? {}
        : { PARLEY_WEBHOOK_TIMEOUT_MS: String(options.timeoutMs) }),
    });
    const server = parley;
    const room = await api<{ id: number }>(server, "POST", "/api/rooms", { name: "deploys" });
    const endpointIds = new Array<number>(ENDPOINTS);
    const urls = receivers.urls;
    // One after the other, so that the ids follow the kinds' order.
    await inParallel(ENDPOINTS, 1, async (i) => {
      const kind = kinds[i]!;
      const created = await api<{ id: number }>(server, "POST", "/api/admin/webhooks", {
        name: `bench ${kind} ${i}`,
        url: `${urls[i]}/${kind}/${i}`,
        secret: SECRET,
        events: ["MESSAGE_CREATED"],
        enabled: kind === "ok",
      });
      endpointIds[i] = created.id;
    });
    const post = async () => {
      const sent = clock();
      const message = await api<{ id: number }>(server, "POST", `/api/rooms/${room.id}/messages`, {
        content:
          "Deploy finished: **api** v1.2.3 is live on `prod` ([run 4242](https://ci.example.com/runs/4242))",
      });
      return { id: message.id, sent, answered: clock() };
    };

    // Warm-up (JIT, connections to the healthy receivers): not counted.
    for (let i = 0; i < WARMUP_MESSAGES; i++) {
      warmIds.add((await post()).id);
      await sleep(1000 / options.rate);
    }
    const warmExpected = WARMUP_MESSAGES * healthyIndexes.length;
    const warmDeadline = clock() + 60_000;
    while (warmArrived < warmExpected && clock() < warmDeadline) await sleep(50);
    if (warmArrived < warmExpected) {
      console.log(
        `    warm-up: only ${warmArrived} of ${warmExpected} healthy deliveries arrived in 60 s ` +
          `(going on; the missing ones are not counted):`,
      );
      await describeMissing(server, [...warmIds], healthyIndexes, endpointIds, arrivals, 5);
    }
    await inParallel(ENDPOINTS, 4, async (i) => {
      if (kinds[i] === "ok") return;
      await api(server, "PATCH", `/api/admin/webhooks/${endpointIds[i]}`, { enabled: true });
    });
    const requestsBefore = (await receivers.stats()).requests;

    // The measured part: posts on a fixed schedule, a sample every 5 s.
    const samples: Sample[] = [];
    const start = clock();
    let sampling: Promise<void> | undefined;
    const takeSample = async () => {
      const at = (clock() - start) / 1000;
      const [receiverStats, text] = await Promise.all([receivers!.stats(), scrapeMetrics(server)]);
      const picked = pickMetrics(text);
      const memory = processMemory(server.pid);
      const sample: Sample = {
        at,
        rssMb: Number.isNaN(memory.rssMb) ? picked.rssMb : memory.rssMb,
        receivers: receiverStats,
        metrics: picked.series,
        healthyArrived: arrived,
      };
      samples.push(sample);
      console.log(`    ${sampleLine(sample)}`);
    };
    const sample = () => {
      sampling ??= takeSample().finally(() => (sampling = undefined));
    };
    sample();
    const sampler = setInterval(sample, SAMPLE_MS);
    const answers = new Map<number, number>();
    const postLatencies: number[] = [];
    let failedPosts = 0;
    const inFlight: Array<Promise<void>> = [];
    for (let i = 0; i < options.messages; i++) {
      const wait = start + (i * 1000) / options.rate - clock();
      if (wait > 1) await sleep(wait);
      inFlight.push(
        post().then(
          (answer) => {
            answers.set(answer.id, answer.answered);
            postLatencies.push(answer.answered - answer.sent);
          },
          () => void failedPosts++,
        ),
      );
    }
    await Promise.all(inFlight);
    const lastPost = Math.max(...answers.values());
    const expected = answers.size * healthyIndexes.length;
    const deadline = lastPost + options.waitSeconds * 1000;
    while (arrived < expected && clock() < deadline) await sleep(100);
    const waitedMs = clock() - lastPost;
    // One more sample after the last arrival (or the end of the wait).
    const samplesSoFar = samples.length;
    const sampleDeadline = clock() + SAMPLE_MS + 2_000;
    while (samples.length === samplesSoFar && clock() < sampleDeadline) await sleep(100);
    clearInterval(sampler);
    await sampling;
    const requestsAfter = (await receivers.stats()).requests;
    const peakRssMb = processMemory(server.pid).peakMb;
    if (arrived < expected) {
      console.log(`    ${expected - arrived} healthy deliveries missing, for example:`);
      await describeMissing(server, [...answers.keys()], healthyIndexes, endpointIds, arrivals, 3);
    }

    const latencies = new Float64Array(answers.size * healthyIndexes.length);
    let n = 0;
    for (const [id, answered] of answers) {
      const row = arrivals.get(id);
      for (const index of healthyIndexes) {
        const at = row?.[index] ?? NaN;
        latencies[n++] = Number.isNaN(at) ? Infinity : at - answered;
      }
    }
    latencies.sort();
    return {
      database: database.name,
      scenario,
      healthy: healthyIndexes.length,
      expected,
      arrived,
      duplicates,
      failedPosts,
      lastAfterPostMs: arrived === expected ? lastArrival - lastPost : undefined,
      latencies,
      postLatencies: postLatencies.sort((a, b) => a - b),
      peakRssMb,
      samples,
      requests: {
        ok: requestsAfter.ok - requestsBefore.ok,
        hang: requestsAfter.hang - requestsBefore.hang,
        fail: requestsAfter.fail - requestsBefore.fail,
      },
      waitedMs,
      seconds: (clock() - started) / 1000,
    };
  } catch (error) {
    if (parley) console.log(`  parley serve printed:\n${parley.output()}`);
    throw error;
  } finally {
    // Hanging attempts end at once, so the server's graceful stop does not wait out the time-out.
    await receivers?.destroyHanging().catch(() => undefined);
    await parley?.stop(15_000);
    await receivers?.close();
    await cleanup();
  }
}

// ---------------------------------------------------------------- report

function sampleLine(s: Sample): string {
  const { open, held } = s.receivers;
  const metrics = [...s.metrics]
    .filter(([, value]) => value !== 0)
    .map(([name, value]) => `${name}=${value}`)
    .join(" ");
  return (
    `t=${s.at.toFixed(0).padStart(3)} s  RSS ${s.rssMb.toFixed(0).padStart(4)} MB  ` +
    `held ok/hang/fail ${held.ok}/${held.hang}/${held.fail}, ` +
    `open ${open.ok}/${open.hang}/${open.fail}  healthy arrived ${s.healthyArrived}` +
    (metrics ? `  /metrics: ${metrics}` : "")
  );
}

function at(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function latency(value: number, waitSeconds: number): string {
  if (value === Infinity) return `>${waitSeconds} s`;
  if (Number.isNaN(value)) return "n/a";
  return value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${value.toFixed(0)} ms`;
}

function printReport(outcomes: Outcome[], options: DeadReceiversOptions): void {
  const [load1 = NaN, load5 = NaN] = os.loadavg();
  console.log(
    `\ndead receivers: ${ENDPOINTS} endpoints, ${options.messages} posts at ${options.rate}/s, ` +
      `webhook time-out ${options.timeoutMs === undefined ? "30 s (default)" : seconds(options.timeoutMs)}, ` +
      `wait up to ${options.waitSeconds} s (load average ${load1.toFixed(1)} / ${load5.toFixed(1)})`,
  );
  console.log(
    `  targets against all healthy: every healthy delivery within ${LAST_ARRIVAL_TARGET_MS / 1000} s ` +
      `of the last post; healthy p99 at most ${P99_RATIO_TARGET}x the all-healthy p99`,
  );
  const header = [
    "database".padEnd(10),
    "configuration".padEnd(24),
    "healthy arrived".padStart(17),
    "last after post".padStart(15),
    "p50".padStart(9),
    "p99".padStart(9),
    "max".padStart(9),
    "p99 ratio".padStart(9),
    "in 5 s".padStart(6),
    "p99 2x".padStart(6),
    "peak RSS".padStart(8),
    "post p99".padStart(8),
  ];
  console.log(`  ${header.join(" ")}`);
  for (const o of outcomes) {
    const base = outcomes.find(
      (b) => b.database === o.database && b.scenario.hanging === 0 && b.scenario.failing === 0,
    );
    const p99 = at(o.latencies, 99);
    const baseP99 = base ? at(base.latencies, 99) : NaN;
    const isBase = base === o;
    const ratio = p99 / baseP99;
    const ratioText = isBase
      ? "(base)"
      : p99 === Infinity
        ? `>${((options.waitSeconds * 1000) / baseP99).toFixed(0)}x`
        : Number.isFinite(ratio)
          ? `${ratio.toFixed(2)}x`
          : "n/a";
    const inTime = o.lastAfterPostMs !== undefined && o.lastAfterPostMs <= LAST_ARRIVAL_TARGET_MS;
    const p99Ok = Number.isFinite(ratio) && ratio <= P99_RATIO_TARGET;
    const row = [
      o.database.padEnd(10),
      o.scenario.label.padEnd(24),
      `${o.arrived}/${o.expected}`.padStart(17),
      (o.lastAfterPostMs === undefined
        ? `>${options.waitSeconds} s`
        : latency(o.lastAfterPostMs, options.waitSeconds)
      ).padStart(15),
      latency(at(o.latencies, 50), options.waitSeconds).padStart(9),
      latency(p99, options.waitSeconds).padStart(9),
      latency(o.latencies.at(-1) ?? NaN, options.waitSeconds).padStart(9),
      ratioText.padStart(9),
      (inTime ? "PASS" : "MISS").padStart(6),
      (isBase ? "-" : base && p99Ok ? "PASS" : "MISS").padStart(6),
      `${o.peakRssMb.toFixed(0)} MB`.padStart(8),
      `${at(Float64Array.from(o.postLatencies), 99).toFixed(0)} ms`.padStart(8),
    ];
    console.log(`  ${row.join(" ")}`);
  }
  console.log(
    "  (latency: from each post's answer to the delivery's arrival; a missing delivery counts as" +
      " longer than the wait; last after post: from the last post's answer; peak RSS: the server's" +
      " high-water mark)",
  );

  for (const o of outcomes) {
    const extra = [
      o.duplicates ? `${o.duplicates} healthy arrived twice` : "",
      o.failedPosts ? `${o.failedPosts} posts FAILED` : "",
    ].filter(Boolean);
    console.log(
      `\n  ${o.database}, ${o.scenario.label}: ${o.healthy} healthy endpoints; attempts received ` +
        `healthy ${o.requests.ok}, hanging ${o.requests.hang}, failing ${o.requests.fail}; ` +
        `waited ${seconds(o.waitedMs)} after the last post; ${o.seconds.toFixed(0)} s in all` +
        (extra.length ? ` (${extra.join(", ")})` : ""),
    );
    // The series as rows (one column per sample), in blocks of 16 samples to fit a terminal.
    const rows: Array<[label: string, values: Array<number | string>]> = [
      ["t (s)", o.samples.map((s) => s.at.toFixed(0))],
      ["RSS (MB)", o.samples.map((s) => s.rssMb.toFixed(0))],
    ];
    for (const kind of KINDS) {
      if (kind !== "ok" && o.samples.every((s) => s.receivers.requests[kind] === 0)) continue;
      const name = kind === "ok" ? "healthy" : kind === "hang" ? "hanging" : "failing";
      rows.push([`held at ${name} receivers`, o.samples.map((s) => s.receivers.held[kind])]);
      rows.push(["  open connections", o.samples.map((s) => s.receivers.open[kind])]);
    }
    rows.push([
      "healthy arrived (thousands)",
      o.samples.map((s) => (s.healthyArrived / 1000).toFixed(1)),
    ]);
    const names = new Set(o.samples.flatMap((s) => [...s.metrics.keys()]));
    const zero = [...names].filter((name) => o.samples.every((s) => !s.metrics.get(name)));
    for (const name of names) {
      if (!zero.includes(name)) rows.push([name, o.samples.map((s) => s.metrics.get(name) ?? "-")]);
    }
    const width = Math.max(...rows.map(([label]) => label.length));
    for (let from = 0; from < o.samples.length; from += 16) {
      if (from > 0) console.log("");
      for (const [label, values] of rows) {
        const cells = values.slice(from, from + 16).map((v) => String(v).padStart(6));
        console.log(`    ${label.padEnd(width)}${cells.join("")}`);
      }
    }
    if (names.size === 0) console.log("    (/metrics shows no slot, breaker or time-out series)");
    else if (zero.length) console.log(`    (0 or absent all along: ${zero.join(" ")})`);
  }
}

// ---------------------------------------------------------------- entry

export async function runDeadReceiversBench(
  options: DeadReceiversOptions = DEAD_RECEIVERS_DEFAULTS,
): Promise<void> {
  const url = benchDatabaseUrl();
  if (!url) console.log("(PostgreSQL skipped: set PARLEY_TEST_DATABASE_URL or DATABASE_URL)");
  const databases = url ? [sqliteDatabase(), postgresDatabase(url)] : [sqliteDatabase()];
  const outcomes: Outcome[] = [];
  try {
    for (const database of databases) {
      for (const scenario of SCENARIOS) {
        console.log(`  ${database.name}, ${scenario.label}:`);
        const outcome = await runScenario(database, scenario, options);
        outcomes.push(outcome);
        const p99 = at(outcome.latencies, 99);
        console.log(
          `  ${database.name}, ${scenario.label}: ${outcome.arrived}/${outcome.expected} healthy arrived, ` +
            `p99 ${latency(p99, options.waitSeconds)} (${outcome.seconds.toFixed(0)} s)`,
        );
      }
    }
  } finally {
    await agent.close();
  }
  printReport(outcomes, options);
}

/** Options from the command line (`--quick` first, then the flags given). */
export function deadReceiversOptionsFrom(values: {
  quick?: boolean | undefined;
  messages?: string | undefined;
  rate?: string | undefined;
  "wait-seconds"?: string | undefined;
  "timeout-ms"?: string | undefined;
}): DeadReceiversOptions {
  const base = values.quick ? DEAD_RECEIVERS_QUICK : DEAD_RECEIVERS_DEFAULTS;
  return {
    messages: numberOption(values.messages, base.messages),
    rate: numberOption(values.rate, base.rate),
    waitSeconds: numberOption(values["wait-seconds"], base.waitSeconds),
    timeoutMs: values["timeout-ms"] === undefined ? base.timeoutMs : Number(values["timeout-ms"]),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean" },
      messages: { type: "string" },
      rate: { type: "string" },
      "wait-seconds": { type: "string" },
      "timeout-ms": { type: "string" },
    },
  });
  await runDeadReceiversBench(deadReceiversOptionsFrom(values));
}
