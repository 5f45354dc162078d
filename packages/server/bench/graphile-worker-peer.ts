/**
 * graphile-worker 0.17 (a PostgreSQL job queue) doing what Parley's delivery engine does: each job
 * holds a frozen envelope, and its task signs it (HMAC-SHA256 over the body, as Parley's
 * sign-payload) and POSTs it to the same loopback receiver, at the same concurrency. The peer of
 * Parley on PostgreSQL in the delivery benchmark.
 *
 *   plain    graphile-worker's defaults (a job fetched and completed per round trip), with the pool
 *            its docs advise (concurrency + 2);
 *   batched  its batching options: a local queue fetching and locking jobs in batches
 *            (`localQueue`), completions and failures grouped (`completeJobBatchDelay`,
 *            `failJobBatchDelay`), Node's clock instead of the database's (`useNodeTime`), prepared
 *            statements (the default, kept).
 *
 * Drain: N jobs queued (`addJobs`, 500 per statement) while no worker runs, then the worker
 * started: jobs/s until the last one arrived. Burst: jobs added one per transaction (`addJob`) by
 * several writers while the worker runs: jobs/s from the first insert to the last arrival, and
 * each job's insert-to-arrival latency. Everything lives in a schema of its own, dropped by close().
 */
import crypto from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import {
  Logger,
  makeWorkerUtils,
  run,
  type Runner,
  type Task,
  type WorkerUtils,
} from "graphile-worker";
import pg from "pg";
import { Agent } from "undici";
import { measureBurst, peerEnvelope as envelope, signedPeerPost } from "./peer-delivery.js";

export type GraphileMode = "plain" | "batched";

/** What the peer needs of the benchmark's receiver. */
export interface PeerReceiver {
  url: string;
  readonly count: number;
  arrivals: Map<string, number>;
  waitFor(n: number, timeoutMs: number): Promise<void>;
}

export interface GraphilePeer {
  readonly mode: GraphileMode;
  /** Connections, prepared statements, JIT: 500 jobs run before anything is measured. */
  warm(): Promise<void>;
  /** N jobs queued, then a worker started; answers jobs/s and CPU µs per job (this process). */
  drain(keys: string[]): Promise<{ rate: number; cpuMicros: number }>;
  /** Jobs inserted by `writers` one at a time while a worker runs. */
  burst(
    keys: string[],
    writers: number,
  ): Promise<{ rate: number; insertRate: number; latencies: number[] }>;
  close(): Promise<void>;
}

/** The batching options of graphile-worker 0.17, as its performance docs describe them. */
export const BATCHED_PRESET = (concurrency: number): GraphileConfig.Preset => ({
  worker: {
    localQueue: {
      // Docs: start from concurrency + 1; higher for many fast jobs, so several fetches' worth.
      size: concurrency * 4,
      ttl: 60_000,
      // A fetch that returns nothing waits ~10 ms before the next (notifications mostly ignored).
      refetchDelay: { durationMs: 10 },
    },
    completeJobBatchDelay: 10,
    failJobBatchDelay: 10,
    useNodeTime: true,
    preparedStatements: true,
  },
});

const clock = () => performance.timeOrigin + performance.now();
const silent = new Logger(() => () => {});

export async function openGraphilePeer(options: {
  databaseUrl: string;
  receiver: PeerReceiver;
  concurrency: number;
  mode: GraphileMode;
}): Promise<GraphilePeer> {
  const { databaseUrl, receiver, concurrency, mode } = options;
  const schema = `bench_gw_${mode}_${crypto.randomBytes(4).toString("hex")}`;
  const agent = new Agent();
  const post = signedPeerPost(receiver.url, agent);
  const deliver: Task = (payload) => post((payload as { body: string }).body);
  const shared = {
    connectionString: databaseUrl,
    schema,
    logger: silent,
  };
  const utils: WorkerUtils = await makeWorkerUtils(shared);
  await utils.migrate();

  const start = (): Promise<Runner> =>
    run({
      ...shared,
      concurrency,
      // graphile-worker's advice: at least concurrency + 2 connections.
      maxPoolSize: concurrency + 2,
      noHandleSignals: true,
      taskList: { deliver },
      ...(mode === "batched" ? { preset: BATCHED_PRESET(concurrency) } : {}),
    });

  const settle = async () => {
    // Batched completions are written after their delay: wait for the table to empty, so the
    // next measurement does not start with this one's leftovers.
    for (let i = 0; i < 200; i++) {
      const { rows } = await utils.withPgClient((client) =>
        client.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}._private_jobs`),
      );
      if (Number(rows[0]?.n) === 0) return;
      await sleep(25);
    }
  };

  return {
    mode,
    async warm() {
      const runner = await start();
      const keys = Array.from({ length: 500 }, (_, i) => `gw-${mode}-warm-${i}`);
      const base = receiver.count;
      for (const key of keys) await utils.addJob("deliver", { body: envelope(key) });
      await receiver.waitFor(base + keys.length, 120_000);
      await runner.stop();
      await settle();
    },
    async drain(keys) {
      for (let i = 0; i < keys.length; i += 500) {
        await utils.addJobs(
          keys
            .slice(i, i + 500)
            .map((key) => ({ identifier: "deliver", payload: { body: envelope(key) } })),
        );
      }
      // What autovacuum does between two runs on a default server (the test server has it off).
      await utils.withPgClient((client) => client.query(`VACUUM ANALYZE ${schema}._private_jobs`));
      const base = receiver.count;
      const started = clock();
      const cpu = process.cpuUsage();
      const runner = await start();
      await receiver.waitFor(base + keys.length, 300_000);
      const elapsed = clock() - started;
      const used = process.cpuUsage(cpu);
      await runner.stop();
      await settle();
      return {
        rate: (keys.length / elapsed) * 1000,
        cpuMicros: (used.user + used.system) / keys.length,
      };
    },
    async burst(keys, writers) {
      const runner = await start();
      const result = await measureBurst(receiver, keys, writers, (key) =>
        utils.addJob("deliver", { body: envelope(key) }),
      );
      await runner.stop();
      await settle();
      return result;
    },
    async close() {
      await utils.release();
      await agent.close();
      const admin = new pg.Client({ connectionString: databaseUrl });
      await admin.connect();
      try {
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await admin.end();
      }
    },
  };
}
