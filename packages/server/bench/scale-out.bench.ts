/**
 * Two Parley processes on one PostgreSQL database against one (issue 14), with the CPU each part
 * used, so what bounds the aggregate can be read off and larger machines estimated.
 *
 *   ingest  Parley servers as in ingest.bench.ts (one process each, attached to ONE schema made
 *           here: same tables, same room, same token); one autocannon in this process with the
 *           same total connections spread evenly over one server's URL or over both; req/s, p99.
 *   drain   N deliveries queued (ADMIN_USER_DISABLED events, each with a key of its own), then
 *           drained to one loopback receiver process (delivery.bench.ts) by one dispatcher
 *           process or by two, each a real dispatcher (createDispatcher, its own pool) on the
 *           same schema; deliveries/s from the start to the last arrival (the table is vacuumed
 *           after queueing, outside the measurement). Every key must arrive
 *           once: the receiver counts arrivals per key, and the table must hold no delivery that
 *           was attempted twice.
 *
 * One and two processes alternate from round to round (medians printed). For every run, CPU from
 * /proc (cpu-accounting.ts): the Parley processes, PostgreSQL's backends serving them and its
 * background processes, the load generator (this process, running autocannon) or the receiver,
 * and what the rest of the machine took meanwhile. From the two-process CPU per operation, the
 * throughput 4 and 8 cores would give (assumptions printed with it).
 *
 * PostgreSQL only (PARLEY_TEST_DATABASE_URL or DATABASE_URL); schemas of its own, dropped after.
 * Run: npx tsx bench/scale-out.bench.ts [--duration 10] [--connections 50] [--rounds 3]
 *   [--events 5000] [--quick]   (also in `npm run bench`, unless --skip-scale-out)
 */
import { fork, type ChildProcess } from "node:child_process";
import os from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import pg from "pg";
import { benchDatabaseUrl, median, openPostgresTarget, type BenchTarget } from "./bench-targets.js";
import { startCpuMeter, taggedUrl, type CpuUse } from "./cpu-accounting.js";
import {
  addEndpoint,
  clock,
  emit,
  newDispatcher,
  SECRET,
  startReceiver,
  type Receiver,
} from "./delivery.bench.js";
import type { Dispatcher } from "../src/webhooks/outbound/delivery-engine/dispatcher.js";
import {
  createPostingFixtures,
  loadUrls,
  start,
  stop,
  type Server,
  type SharedSchema,
} from "./ingest.bench.js";
import { inParallel } from "./in-parallel.js";
import { numberOption } from "./number-option.js";

export interface ScaleOutOptions {
  /** Seconds per ingest run. */
  duration: number;
  /** Total autocannon connections, split evenly over the servers. */
  connections: number;
  /** Rounds; each has a one-process and a two-process run of ingest and of drain. */
  rounds: number;
  /** Deliveries per drain. */
  events: number;
}

export const SCALE_OUT_DEFAULTS: ScaleOutOptions = {
  duration: 10,
  connections: 50,
  rounds: 3,
  events: 5_000,
};
export const SCALE_OUT_QUICK: ScaleOutOptions = {
  duration: 3,
  connections: 50,
  rounds: 1,
  events: 1_000,
};

/** Every PostgreSQL connection of the measured processes carries an application_name starting so. */
const TAG = "parley_scale_out";
const WRITERS = 16;

/** One run: its rate, and the CPU of each part per operation (µs). */
interface Sample {
  rate: number;
  p99?: number;
  perOp: Record<string, number>;
  othersPerOp: number;
  machineBusy: number;
}

function sample(rate: number, ops: number, cpu: CpuUse, p99?: number): Sample {
  const perOp = Object.fromEntries(
    Object.entries(cpu.parts).map(([name, micros]) => [name, micros / ops]),
  );
  return { rate, p99, perOp, othersPerOp: cpu.others / ops, machineBusy: cpu.machineBusy };
}

/** The children's environment: the tagged URL (both variables the children read) and the schema. */
function childEnv(url: string, name: string, shared: Partial<SharedSchema>): NodeJS.ProcessEnv {
  const tagged = taggedUrl(url, `${TAG}_${name}`);
  return {
    ...process.env,
    PARLEY_TEST_DATABASE_URL: tagged,
    DATABASE_URL: tagged,
    PARLEY_BENCH_SHARED: JSON.stringify(shared),
  };
}

// ---------------------------------------------------------------- ingest

async function ingest(
  url: string,
  admin: pg.Client,
  options: ScaleOutOptions,
): Promise<Record<1 | 2, Sample[]>> {
  const target = await openPostgresTarget(url);
  const servers: Server[] = [];
  const samples: Record<1 | 2, Sample[]> = { 1: [], 2: [] };
  try {
    const { token } = await createPostingFixtures(target.ctx);
    const shared: SharedSchema = {
      schema: target.schema!,
      masterKey: target.ctx.config.masterKey!,
      token,
    };
    for (const name of ["a", "b"]) {
      servers.push(await start("postgres", childEnv(url, `ingest_${name}`, shared)));
    }
    const urls = servers.map((s) => `http://127.0.0.1:${s.ready.port}${s.ready.path}`);
    // Warm-up (JIT, pool connections, plans) of both, not counted.
    await loadUrls(urls, 2, options.connections);
    await loadUrls(urls.slice(0, 1), 1, options.connections);
    const parts = {
      Parley: servers.map((s) => s.process.pid!),
      "load generator": [process.pid],
    };
    for (let round = 0; round < options.rounds; round++) {
      for (const n of round % 2 ? ([2, 1] as const) : ([1, 2] as const)) {
        const meter = await startCpuMeter(parts, admin, TAG);
        const run = await loadUrls(urls.slice(0, n), options.duration, options.connections);
        const cpu = await meter();
        const s = sample(run.rps, run.rps * options.duration, cpu, run.p99);
        samples[n].push(s);
        console.log(
          `  ingest round ${round + 1}, ${n} process${n === 1 ? " " : "es"} ${run.rps.toFixed(0).padStart(6)} req/s, ` +
            `p99 ${String(run.p99).padStart(4)} ms, ${cpuLine(s)}` +
            (run.non2xx || run.errors ? `  (${run.non2xx} non-2xx, ${run.errors} errors!)` : ""),
        );
      }
    }
  } finally {
    for (const server of servers) await stop(server);
    await target.cleanup();
  }
  return samples;
}

// ---------------------------------------------------------------- drain

/** A dispatcher process: attaches to the schema, runs a dispatcher between "start" and "stop". */
async function dispatcherChild(): Promise<void> {
  const shared = JSON.parse(process.env.PARLEY_BENCH_SHARED!) as SharedSchema;
  const target = await openPostgresTarget(process.env.PARLEY_TEST_DATABASE_URL!, shared);
  let dispatcher: Promise<Dispatcher> | undefined;
  process.on("message", (message: unknown) => {
    if (message === "start") {
      dispatcher = newDispatcher(target.ctx).then((started) => {
        started.start();
        return started;
      });
    } else if (message === "stop") {
      void (async () => {
        await (await dispatcher)?.stop();
        dispatcher = undefined;
        process.send!("stopped");
      })();
    } else if (message === "close") {
      void target.cleanup().then(() => process.exit(0));
    }
  });
  process.send!("ready");
}

interface DispatcherProcess {
  process: ChildProcess;
  tell(message: "start" | "stop" | "close"): Promise<void>;
}

async function forkDispatcher(env: NodeJS.ProcessEnv): Promise<DispatcherProcess> {
  const child = fork(fileURLToPath(import.meta.url), ["--dispatch"], { stdio: "inherit", env });
  const replies: Array<() => void> = [];
  await new Promise<void>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`dispatcher process exited with ${code}`)));
    child.on("message", (message) => {
      if (message === "ready") resolve();
      else replies.shift()?.();
    });
  });
  return {
    process: child,
    tell(message) {
      if (message === "start") return Promise.resolve(void child.send(message));
      if (message === "close") {
        const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
        child.send(message);
        return exited;
      }
      return new Promise<void>((resolve) => {
        replies.push(resolve);
        child.send(message);
      });
    },
  };
}

/** Queues `events` deliveries; runs `n` dispatcher processes until every one has arrived. */
async function drainOnce(
  target: BenchTarget,
  receiver: Receiver,
  dispatchers: DispatcherProcess[],
  tag: string,
  events: number,
  metered?: { parts: Record<string, number[]>; admin: pg.Client },
): Promise<{ rate: number; twice: number; missing: number; cpu?: CpuUse }> {
  const keys = Array.from({ length: events }, (_, i) => `${tag}-${i}`);
  await inParallel(events, WRITERS, (i) => emit(target.ctx, keys[i]!));
  // What autovacuum does between runs (it is off on some servers, the test one among them): the
  // previous drain's dead row versions would otherwise make every claim slower, run after run.
  await sql`VACUUM ANALYZE webhook_deliveries`.execute(target.ctx.db);
  const base = receiver.count;
  const meter = metered ? await startCpuMeter(metered.parts, metered.admin, TAG) : undefined;
  const started = clock();
  for (const d of dispatchers) await d.tell("start");
  await receiver.waitFor(base + events, 300_000);
  const elapsed = clock() - started;
  const cpu = await meter?.();
  for (const d of dispatchers) await d.tell("stop");
  // Arrivals are reported every 5 ms: let any late one (a second send) be counted.
  await sleep(100);
  let arrived = 0;
  for (const key of keys) {
    if (receiver.arrivals.delete(key)) arrived++;
  }
  return {
    rate: (events / elapsed) * 1000,
    twice: receiver.count - base - arrived,
    missing: events - arrived,
    cpu,
  };
}

async function drain(
  url: string,
  admin: pg.Client,
  options: ScaleOutOptions,
): Promise<{ samples: Record<1 | 2, Sample[]>; twice: number; missing: number; retried: number }> {
  const target = await openPostgresTarget(url);
  const receiver = await startReceiver();
  const dispatchers: DispatcherProcess[] = [];
  const samples: Record<1 | 2, Sample[]> = { 1: [], 2: [] };
  let twice = 0;
  let missing = 0;
  try {
    await addEndpoint(target.ctx, receiver.url, SECRET);
    const shared = { schema: target.schema!, masterKey: target.ctx.config.masterKey! };
    for (const name of ["a", "b"]) {
      dispatchers.push(await forkDispatcher(childEnv(url, `drain_${name}`, shared)));
    }
    // Warm-up of both (connections, plans, JIT), not counted.
    await drainOnce(target, receiver, dispatchers, "warm", 500);
    const parts = {
      Parley: dispatchers.map((d) => d.process.pid!),
      receiver: [receiver.pid],
      "bench process": [process.pid],
    };
    for (let round = 0; round < options.rounds; round++) {
      for (const n of round % 2 ? ([2, 1] as const) : ([1, 2] as const)) {
        const run = await drainOnce(
          target,
          receiver,
          dispatchers.slice(0, n),
          `r${round}-p${n}`,
          options.events,
          { parts, admin },
        );
        twice += run.twice;
        missing += run.missing;
        const s = sample(run.rate, options.events, run.cpu!);
        samples[n].push(s);
        console.log(
          `  drain round ${round + 1}, ${n} process${n === 1 ? " " : "es"} ${run.rate.toFixed(0).padStart(6)} deliveries/s, ` +
            `${cpuLine(s)}` +
            (run.twice || run.missing ? `  (${run.twice} TWICE, ${run.missing} MISSING)` : ""),
        );
      }
    }
    const { rows } = await admin.query<{ retried: string }>(
      `SELECT count(*) FILTER (WHERE attempts > 1 OR status <> 'SUCCESS') AS retried
       FROM ${target.schema}.webhook_deliveries`,
    );
    return { samples, twice, missing, retried: Number(rows[0]!.retried) };
  } finally {
    for (const d of dispatchers) await d.tell("close");
    await receiver.close();
    await target.cleanup();
  }
}

// ---------------------------------------------------------------- summary

const us = (value: number | undefined) =>
  value === undefined || Number.isNaN(value) ? "   n/a" : value.toFixed(0).padStart(6);

function cpuLine(s: Sample): string {
  const parts = Object.entries(s.perOp)
    .map(([name, value]) => `${name} ${us(value).trim()}`)
    .join(", ");
  return `CPU µs/op: ${parts}, others ${us(s.othersPerOp).trim()} (machine ${(s.machineBusy * 100).toFixed(0)}% busy)`;
}

/** Medians over the rounds, part by part. */
function medians(samples: Sample[]): Sample {
  const names = Object.keys(samples[0]!.perOp);
  return {
    rate: median(samples.map((s) => s.rate)),
    p99: samples[0]!.p99 === undefined ? undefined : median(samples.map((s) => s.p99!)),
    perOp: Object.fromEntries(names.map((n) => [n, median(samples.map((s) => s.perOp[n]!))])),
    othersPerOp: median(samples.map((s) => s.othersPerOp)),
    machineBusy: median(samples.map((s) => s.machineBusy)),
  };
}

function printCase(what: string, unit: string, samples: Record<1 | 2, Sample[]>, off: string) {
  const one = medians(samples[1]);
  const two = medians(samples[2]);
  const names = Object.keys(one.perOp);
  console.log(
    `\n${what} (medians)      ${unit.padStart(8)}  p99 ms  ` +
      `${names.map((n) => n.padStart(Math.max(10, n.length))).join(" ")}  others  machine busy   (CPU µs per op)`,
  );
  for (const [label, m] of [
    ["1 process  ", one],
    ["2 processes", two],
  ] as const) {
    console.log(
      `  ${label}         ${m.rate.toFixed(0).padStart(8)}  ${m.p99 === undefined ? "     -" : String(m.p99).padStart(6)}  ` +
        `${names.map((n) => us(m.perOp[n]).padStart(Math.max(10, n.length))).join(" ")}  ${us(m.othersPerOp)}  ${(m.machineBusy * 100).toFixed(0).padStart(11)}%`,
    );
  }
  console.log(`  2 processes / 1 process: x${(two.rate / one.rate).toFixed(2)}`);

  // The estimate: the parts that would run on the database machine's cores (Parley, PostgreSQL),
  // from the two-process CPU per op; the load generator or receiver (`off`) runs elsewhere.
  const parley = two.perOp.Parley!;
  const postgres = two.perOp.PostgreSQL!;
  const perOp = parley + postgres;
  const onHere = perOp + (two.perOp[off] ?? 0);
  console.log(
    `  CPU per op at 2 processes: Parley ${parley.toFixed(0)} + PostgreSQL ${postgres.toFixed(0)} = ${perOp.toFixed(0)} µs` +
      ` (+ ${off} ${(two.perOp[off] ?? NaN).toFixed(0)} µs on this machine): ` +
      `2 cores used by this alone would give ${((2e6 / onHere) | 0).toLocaleString("en")}/s (measured ${two.rate.toFixed(0)}/s)`,
  );
  for (const cores of [4, 8]) {
    const processes = Math.ceil((cores * parley) / perOp);
    console.log(
      `  estimate, ${cores} cores: ~${(Math.round((cores * 1e6) / perOp / 10) * 10).toLocaleString("en")}/s ` +
        `(${cores} x 1,000,000 / ${perOp.toFixed(0)} µs), with at least ${processes} Parley processes`,
    );
  }
}

export async function runScaleOutBench(options: ScaleOutOptions = SCALE_OUT_DEFAULTS) {
  const url = benchDatabaseUrl();
  if (!url) {
    console.log("(scale-out skipped: PostgreSQL only; set PARLEY_TEST_DATABASE_URL)");
    return;
  }
  const [load1 = NaN, load5 = NaN] = os.loadavg();
  console.log(
    `scale-out on PostgreSQL: ${options.rounds} rounds; ingest ${options.duration} s x ${options.connections} connections; ` +
      `drain ${options.events} deliveries; ${os.cpus().length} CPUs, load average ${load1.toFixed(1)} / ${load5.toFixed(1)}`,
  );
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const ingested = await ingest(url, admin, options);
    const drained = await drain(url, admin, options);
    const [after1 = NaN, after5 = NaN] = os.loadavg();
    console.log(`\nload average at the end ${after1.toFixed(1)} / ${after5.toFixed(1)}`);
    printCase("ingest", "req/s", ingested, "load generator");
    printCase("drain", "deliv/s", drained.samples, "receiver");
    console.log(
      `  every delivery arrived once: ${drained.twice === 0 && drained.missing === 0 && drained.retried === 0 ? "yes" : "NO"} ` +
        `(${drained.twice} arrived twice, ${drained.missing} missing, ${drained.retried} rows attempted more than once or not SUCCESS)`,
    );
    console.log(
      "\n  Assumptions of the estimate: CPU is the only bound (no lock, WAL flush or network limit" +
        " appears first); the load generator and the receiver run on other machines; Parley and" +
        " PostgreSQL share the cores, with enough Parley processes to fill them; CPU per operation" +
        " stays as measured here with two processes (a shared, loaded 2-core machine).",
    );
  } finally {
    await admin.end();
  }
}

export function scaleOutOptionsFrom(values: {
  quick?: boolean | undefined;
  duration?: string | undefined;
  connections?: string | undefined;
  rounds?: string | undefined;
  events?: string | undefined;
}): ScaleOutOptions {
  const base = values.quick ? SCALE_OUT_QUICK : SCALE_OUT_DEFAULTS;
  return {
    duration: numberOption(values.duration, base.duration),
    connections: numberOption(values.connections, base.connections),
    rounds: numberOption(values.rounds, base.rounds),
    events: numberOption(values.events, base.events),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      dispatch: { type: "boolean" },
      quick: { type: "boolean" },
      duration: { type: "string" },
      connections: { type: "string" },
      rounds: { type: "string" },
      events: { type: "string" },
    },
  });
  if (values.dispatch) await dispatcherChild();
  else await runScaleOutBench(scaleOutOptionsFrom(values));
}
