/**
 * BullMQ 6 (a Redis job queue) doing what Parley's delivery engine does: each job holds a frozen
 * envelope, and its processor signs it (HMAC-SHA256 over the body, as Parley's sign-payload) and
 * POSTs it to the same loopback receiver, at the same concurrency. The Redis peer of Parley in the
 * delivery benchmark, beside graphile-worker on PostgreSQL.
 *
 * Each mode runs a Redis server of its own (redis-server from PATH, on a free loopback port, in a
 * temporary directory), so its CPU is measured apart from any other Redis on the machine:
 *
 *   memory  no persistence (`--save "" --appendonly no`): what BullMQ's own benchmarks run;
 *   aof     the append-only file, fsync every second (`--appendonly yes --appendfsync everysec`):
 *           Redis's advice for a queue that must survive a restart, and the nearest to Parley's
 *           durable commit (still weaker: up to a second of acknowledged jobs can be lost).
 *
 * Jobs are removed once completed (`removeOnComplete`), as production set-ups do; Parley keeps every
 * delivery with its attempts. Drain: N jobs queued (`addBulk`, 500 per call) while no worker runs,
 * then a worker started: jobs/s until the last one arrived. Burst: jobs added one at a time
 * (`add`) by several writers while the worker runs.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Queue, Worker } from "bullmq";
import { Agent } from "undici";
import { processCpuMicros } from "./cpu-accounting.js";
import type { PeerReceiver } from "./graphile-worker-peer.js";
import { measureBurst, peerEnvelope, signedPeerPost } from "./peer-delivery.js";

export type BullMqMode = "memory" | "aof";

export interface BullMqPeer {
  readonly mode: BullMqMode;
  warm(): Promise<void>;
  /** N jobs queued, then a worker started: jobs/s, CPU µs per job of this process and of Redis. */
  drain(keys: string[]): Promise<{ rate: number; cpuMicros: number; redisCpuMicros: number }>;
  burst(
    keys: string[],
    writers: number,
  ): Promise<{ rate: number; insertRate: number; latencies: number[] }>;
  close(): Promise<void>;
}

/** Whether redis-server can be started here (the peer is left out of the run otherwise). */
export function hasRedisServer(): boolean {
  const paths = (process.env.PATH ?? "").split(path.delimiter);
  return paths.some((dir) => fs.existsSync(path.join(dir, "redis-server")));
}

const clock = () => performance.timeOrigin + performance.now();

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startRedis(
  mode: BullMqMode,
): Promise<{ port: number; child: ChildProcess; dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `parley-bench-redis-${mode}-`));
  const port = await freePort();
  const persistence =
    mode === "aof"
      ? ["--appendonly", "yes", "--appendfsync", "everysec", "--save", ""]
      : ["--appendonly", "no", "--save", ""];
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, ...persistence],
    { stdio: "ignore" },
  );
  for (let i = 0; i < 200; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => {
        socket.end();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (up) return { port, child, dir };
    await sleep(25);
  }
  child.kill();
  throw new Error(`redis-server (${mode}) did not start on port ${port}`);
}

export async function openBullMqPeer(options: {
  receiver: PeerReceiver;
  concurrency: number;
  mode: BullMqMode;
}): Promise<BullMqPeer> {
  const { receiver, concurrency, mode } = options;
  const redis = await startRedis(mode);
  const connection = { host: "127.0.0.1", port: redis.port, maxRetriesPerRequest: null };
  const name = `deliveries-${mode}`;
  const queue = new Queue(name, {
    connection,
    defaultJobOptions: { removeOnComplete: true, removeOnFail: 1_000 },
  });
  const agent = new Agent();
  const deliver = signedPeerPost(receiver.url, agent);
  const start = () =>
    new Worker(name, async (job) => deliver((job.data as { body: string }).body), {
      connection,
      concurrency,
    });
  const redisCpu = () => processCpuMicros(redis.child.pid!) ?? NaN;

  return {
    mode,
    async warm() {
      const worker = start();
      const base = receiver.count;
      for (let i = 0; i < 500; i++)
        await queue.add("deliver", { body: peerEnvelope(`bq-${mode}-warm-${i}`) });
      await receiver.waitFor(base + 500, 120_000);
      await worker.close();
    },
    async drain(keys) {
      for (let i = 0; i < keys.length; i += 500)
        await queue.addBulk(
          keys
            .slice(i, i + 500)
            .map((key) => ({ name: "deliver", data: { body: peerEnvelope(key) } })),
        );
      const base = receiver.count;
      const started = clock();
      const cpu = process.cpuUsage();
      const redisBefore = redisCpu();
      const worker = start();
      await receiver.waitFor(base + keys.length, 300_000);
      const elapsed = clock() - started;
      const used = process.cpuUsage(cpu);
      const redisUsed = redisCpu() - redisBefore;
      await worker.close();
      return {
        rate: (keys.length / elapsed) * 1000,
        cpuMicros: (used.user + used.system) / keys.length,
        redisCpuMicros: redisUsed / keys.length,
      };
    },
    async burst(keys, writers) {
      const worker = start();
      const result = await measureBurst(receiver, keys, writers, (key) =>
        queue.add("deliver", { body: peerEnvelope(key) }),
      );
      await worker.close();
      return result;
    },
    async close() {
      await queue.close();
      await agent.close();
      redis.child.kill();
      await new Promise((resolve) => redis.child.once("exit", resolve));
      fs.rmSync(redis.dir, { recursive: true, force: true });
    },
  };
}
