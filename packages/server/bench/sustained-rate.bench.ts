/**
 * How far Parley goes at a latency target: the highest rate of deliveries each database sustains
 * for `--seconds` (60 in `npm run bench`) with commit-to-arrival p99 under 100 ms, found by
 * doubling from 250 deliveries/s until a run misses, then bisecting between the last rate that held
 * and the first that did not (`--steps` times). With one endpoint and with ten (each post fans out
 * to every endpoint: the rate counts deliveries). A run holds when every post committed on its
 * schedule (at least 97% of the rate), every delivery arrived, and p99 < 100 ms.
 *
 * Then the fan-out case: one post to 1,000 endpoints, `--fanouts` times, 2 s apart: the post's own
 * latency (p99, target under 50 ms) and the time from its commit until all 1,000 arrived (target
 * under 1 s). And the RSS of this process (server code, engine, producer) before and after all the
 * sustained runs of a database.
 *
 * Posts are complete chat posts (postMessage), each on its own schedule; the receiver runs in a
 * process of its own and answers 204 (delivery.bench.ts). Runs on SQLite, and on PostgreSQL when
 * PARLEY_TEST_DATABASE_URL or DATABASE_URL is set.
 *
 *   npx tsx bench/sustained-rate.bench.ts [--seconds 60] [--steps 3] [--fanouts 10] [--quick]
 *     [--send-threads N] [--start-rate N] [--only sqlite|postgres]
 */
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { setTimeout as sleep } from "node:timers/promises";
import type { AppContext } from "../src/app-context.js";
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
import {
  addEndpoint,
  clock,
  newDispatcher,
  SECRET,
  startReceiver,
  type Receiver,
} from "./delivery.bench.js";
import { numberOption } from "./number-option.js";
import { sendThreadsFor } from "../src/webhooks/outbound/delivery-engine/create-dispatcher.js";

export interface SustainedOptions {
  seconds: number;
  /** Bisection steps after the doubling. */
  steps: number;
  /** Posts of the fan-out case. */
  fanouts: number;
  /** PARLEY_WEBHOOK_SEND_THREADS for the engine; undefined: the default of this machine. */
  sendThreads?: number | undefined;
  /** The first rate tried (default 250/s): a later one skips the doubling below it. */
  startRate?: number | undefined;
  /** Only these databases (default: SQLite, and PostgreSQL when its URL is set). */
  only?: "sqlite" | "postgres" | undefined;
}
export const SUSTAINED_DEFAULTS: SustainedOptions = { seconds: 60, steps: 3, fanouts: 10 };
export const SUSTAINED_QUICK: SustainedOptions = { seconds: 10, steps: 1, fanouts: 3 };

const P99_TARGET_MS = 100;
const START_RATE = 250;
const MAX_RATE = 32_000;
const FANOUT_ENDPOINTS = 1_000;
const TARGETS = { sqlite: 2_500, postgres: 1_500 } as const;

interface RunResult {
  /** Deliveries per second asked for. */
  rate: number;
  held: boolean;
  p50: number;
  p99: number;
  committed: number;
  arrived: number;
  expected: number;
}

/** Endpoints 0..n-1 at /hook/<i> of one receiver, each hearing MESSAGE_CREATED; the others off. */
async function useEndpoints(ctx: AppContext, receiver: Receiver, ids: number[], n: number) {
  while (ids.length < n) ids.push(await addEndpoint(ctx, `${receiver.url}/${ids.length}`, SECRET));
  await ctx.db.updateTable("webhooks").set({ enabled: 0 }).execute();
  await ctx.db
    .updateTable("webhooks")
    .set({ enabled: 1 })
    .where("id", "in", ids.slice(0, n))
    .execute();
}

/** Posts at `rate / endpoints` posts/s for `seconds`; commit-to-arrival of every delivery. */
async function run(
  ctx: AppContext,
  room: PostingRoom,
  receiver: Receiver,
  endpoints: number,
  rate: number,
  seconds: number,
): Promise<RunResult> {
  // What autovacuum does between two runs on a default server (the test server has it off): the
  // earlier runs' dead rows would otherwise slow each claim more than the run before.
  if (ctx.dialect === "postgres")
    await sql`VACUUM ANALYZE webhook_deliveries, webhook_attempts, messages, webhooks`.execute(
      ctx.db,
    );
  const perSecond = rate / endpoints;
  const total = Math.max(1, Math.round(perSecond * seconds));
  const commits = new Map<number, number>();
  const latencies = new Float64Array(total * endpoints);
  let matched = 0;
  const match = () => {
    for (const [id, committed] of commits) {
      let all = true;
      for (let e = 0; e < endpoints; e++) {
        const key = `m${id}@${e}`;
        const arrived = receiver.arrivals.get(key);
        if (arrived === undefined) {
          all = false;
          continue;
        }
        latencies[matched++] = arrived - committed;
        receiver.arrivals.delete(key);
      }
      if (all) commits.delete(id);
    }
  };
  const base = receiver.count;
  const start = clock();
  let inFlight = 0;
  let lastCommit = start;
  let failed = 0;
  const matcher = setInterval(match, 250);
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / perSecond - clock();
    if (wait > 1) await sleep(wait);
    inFlight++;
    postOne(ctx, room)
      .then((id) => commits.set(id, (lastCommit = clock())))
      .catch(() => failed++)
      .finally(() => inFlight--);
  }
  while (inFlight > 0) await sleep(5);
  // A run that keeps up has everything within a second; one that does not is over anyway.
  const deadline = clock() + 10_000;
  for (match(); commits.size > 0 && clock() < deadline; match()) await sleep(20);
  clearInterval(matcher);
  // A run that fell behind leaves a backlog: the next run starts once it has arrived, or it would
  // be measured behind this one's.
  await receiver.waitFor(base + total * endpoints, 600_000).catch(() => undefined);
  const sorted = Array.from(latencies.subarray(0, matched)).sort((a, b) => a - b);
  const committed = ((total - failed) / Math.max(lastCommit - start, 1)) * 1000 * endpoints;
  const p99 = percentile(sorted, 99);
  return {
    rate,
    held:
      failed === 0 &&
      matched === total * endpoints &&
      committed >= 0.97 * rate &&
      p99 < P99_TARGET_MS,
    p50: percentile(sorted, 50),
    p99,
    committed,
    arrived: matched,
    expected: total * endpoints,
  };
}

function describe(r: RunResult): string {
  return (
    `${r.rate.toFixed(0).padStart(6)}/s: committed ${r.committed.toFixed(0)}/s, p50 ${r.p50.toFixed(1)} ms, ` +
    `p99 ${r.p99.toFixed(1)} ms, ${r.arrived} of ${r.expected} arrived: ${r.held ? "held" : "missed"}`
  );
}

/** Doubling, then bisection: the highest rate that held (0 if even the first did not). */
async function highestRate(
  label: string,
  attempt: (rate: number) => Promise<RunResult>,
  steps: number,
  startRate: number,
): Promise<number> {
  let good = 0;
  let bad = 0;
  for (let rate = startRate; rate <= MAX_RATE; rate *= 2) {
    const r = await attempt(rate);
    console.log(`  ${label} ${describe(r)}`);
    if (!r.held) {
      bad = rate;
      break;
    }
    good = rate;
  }
  for (let i = 0; i < steps && bad > 0 && good > 0; i++) {
    const rate = Math.round((good + bad) / 2);
    const r = await attempt(rate);
    console.log(`  ${label} ${describe(r)}`);
    if (r.held) good = rate;
    else bad = rate;
  }
  return good;
}

/** One post to every enabled endpoint, `times` times: the post's latency and the last arrival. */
async function fanOut(
  ctx: AppContext,
  room: PostingRoom,
  receiver: Receiver,
  endpoints: number,
  times: number,
): Promise<{ postP99: number; allArrived: number[] }> {
  const posts: number[] = [];
  const allArrived: number[] = [];
  for (let i = 0; i < times; i++) {
    const started = clock();
    const id = await postOne(ctx, room);
    const committed = clock();
    posts.push(committed - started);
    const keys = Array.from({ length: endpoints }, (_, e) => `m${id}@${e}`);
    const deadline = committed + 30_000;
    while (keys.some((key) => !receiver.arrivals.has(key)) && clock() < deadline) await sleep(5);
    allArrived.push(
      Math.max(...keys.map((key) => receiver.arrivals.get(key) ?? Infinity)) - committed,
    );
    for (const key of keys) receiver.arrivals.delete(key);
    await sleep(2_000);
  }
  return {
    postP99: percentile(
      [...posts].sort((a, b) => a - b),
      99,
    ),
    allArrived,
  };
}

export async function runSustainedBench(options: SustainedOptions): Promise<void> {
  console.log(
    `sustained rate at p99 < ${P99_TARGET_MS} ms: ${options.seconds} s per run, doubling from ${options.startRate ?? START_RATE}/s then ` +
      `${options.steps} bisection step(s); fan-out of one post to ${FANOUT_ENDPOINTS} endpoints, ${options.fanouts} times`,
  );
  const url = benchDatabaseUrl();
  const opens: Array<() => Promise<BenchTarget>> = [];
  if (options.only !== "postgres") opens.push(openSqliteTarget);
  if (url && options.only !== "sqlite") opens.push(() => openPostgresTarget(url));
  else if (!url) console.log("(PostgreSQL skipped: set PARLEY_TEST_DATABASE_URL or DATABASE_URL)");
  const lines: string[] = [];
  for (const open of opens) {
    const target = await open();
    const receiver = await startReceiver();
    if (options.sendThreads !== undefined)
      target.ctx.config.webhookSendThreads = options.sendThreads;
    const threads = sendThreadsFor(target.ctx.config);
    console.log(`${target.name}: ${threads} send thread(s)`);
    const dispatcher = await newDispatcher(target.ctx);
    try {
      const { ctx } = target;
      const room = await createPostingRoom(ctx);
      const ids: number[] = [];
      dispatcher.start();
      await useEndpoints(ctx, receiver, ids, 1);
      await run(ctx, room, receiver, 1, 500, 3); // warm-up
      const rssBefore = process.memoryUsage.rss() / 2 ** 20;
      const found: Record<number, number> = {};
      for (const endpoints of [1, 10]) {
        await useEndpoints(ctx, receiver, ids, endpoints);
        found[endpoints] = await highestRate(
          `${target.name}, ${endpoints} endpoint(s),`,
          (rate) => run(ctx, room, receiver, endpoints, rate, options.seconds),
          options.steps,
          options.startRate ?? START_RATE,
        );
      }
      const rssAfter = process.memoryUsage.rss() / 2 ** 20;
      await useEndpoints(ctx, receiver, ids, FANOUT_ENDPOINTS);
      const fan = await fanOut(ctx, room, receiver, FANOUT_ENDPOINTS, options.fanouts);
      const goal = target.name === "SQLite" ? TARGETS.sqlite : TARGETS.postgres;
      const allArrived = median(fan.allArrived);
      const worst = Math.max(...fan.allArrived);
      const mark = lines.length;
      lines.push(
        `${target.name} (${threads} send thread(s)): sustained at p99 < ${P99_TARGET_MS} ms for ${options.seconds} s: ${found[1]}/s with one endpoint ` +
          `(target >= ${goal}/s: ${found[1]! >= goal ? "met" : "MISSED"}), ${found[10]}/s with ten; ` +
          `RSS ${rssBefore.toFixed(0)} -> ${rssAfter.toFixed(0)} MB over the sustained runs`,
        `${target.name}: one post to ${FANOUT_ENDPOINTS} endpoints: post p99 ${fan.postP99.toFixed(1)} ms (target < 50 ms: ` +
          `${fan.postP99 < 50 ? "met" : "MISSED"}), all arrived after ${allArrived.toFixed(0)} ms median, ${worst.toFixed(0)} ms ` +
          `at worst (target < 1,000 ms: ${worst < 1_000 ? "met" : "MISSED"})`,
      );
      for (const line of lines.slice(mark)) console.log(`  ${line}`);
    } finally {
      await dispatcher.stop();
      await receiver.close();
      await target.cleanup();
    }
  }
  console.log("\nsustained rate summary:");
  for (const line of lines) console.log(`  ${line}`);
}

export function sustainedOptionsFrom(values: {
  quick?: boolean | undefined;
  seconds?: string | undefined;
  steps?: string | undefined;
  fanouts?: string | undefined;
  "send-threads"?: string | undefined;
  "start-rate"?: string | undefined;
  only?: string | undefined;
}): SustainedOptions {
  const base = values.quick ? SUSTAINED_QUICK : SUSTAINED_DEFAULTS;
  return {
    seconds: numberOption(values.seconds, base.seconds),
    steps: numberOption(values.steps, base.steps),
    fanouts: numberOption(values.fanouts, base.fanouts),
    sendThreads:
      values["send-threads"] === undefined ? undefined : numberOption(values["send-threads"], 0),
    startRate:
      values["start-rate"] === undefined ? undefined : numberOption(values["start-rate"], 250),
    only: values.only === "sqlite" || values.only === "postgres" ? values.only : undefined,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean" },
      seconds: { type: "string" },
      steps: { type: "string" },
      fanouts: { type: "string" },
      "send-threads": { type: "string" },
      "start-rate": { type: "string" },
      only: { type: "string" },
    },
  });
  await runSustainedBench(sustainedOptionsFrom(values));
}
