/**
 * Ordered lanes (docs/webhooks.md, "Ordered delivery"), on each database, side by side in one run:
 *
 * - drain of a backlog of `--events` events spread over 100 rooms to one endpoint, with
 *   `ordering: "none"` and with `ordering: "room"`, in `--rounds` alternating rounds; the target:
 *   "room" drains at least 50% of "none";
 * - drain with `ordering: "endpoint"` (one attempt in flight) against a receiver that answers in
 *   1 ms and in 50 ms: the rate is bounded by one round trip per delivery.
 *
 * Each receiver runs in a process of its own and answers 204 after its delay.
 *
 *   npx tsx bench/ordered-lanes.bench.ts [--quick] [--events N] [--rounds N]
 */
import { fork } from "node:child_process";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import type { AppContext } from "../src/app-context.js";
import type { Ordering } from "../src/db/schema.js";
import { openTargets, type BenchTarget } from "./bench-targets.js";
import { addEndpoint, clock, newDispatcher, SECRET } from "./delivery.bench.js";
import { drainProfiler } from "./drain-profiler.js";
import { postgresServerCpu, postgresServerCpuSince } from "./cpu-accounting.js";
import { inParallel } from "./in-parallel.js";
import { numberOption } from "./number-option.js";

export interface OrderedLanesOptions {
  /** Events per drain of "none" and "room". */
  events: number;
  rounds: number;
  /** Events per "endpoint" drain against the 1 ms receiver (the 50 ms one gets a tenth). */
  endpointEvents: number;
}

export const ORDERED_LANES_DEFAULTS: OrderedLanesOptions = {
  events: 5_000,
  rounds: 3,
  endpointEvents: 1_000,
};
export const ORDERED_LANES_QUICK: OrderedLanesOptions = {
  events: 1_000,
  rounds: 1,
  endpointEvents: 300,
};

const ROOMS = 100;
const WRITERS = 16;
const TARGET_RATIO = 0.5;

interface DelayedReceiver {
  url: string;
  readonly count: number;
  waitFor(n: number, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/** A receiver process answering 204 after `delayMs` (0: at once); it reports how many arrived. */
const RECEIVER_SOURCE = `
  const http = require("node:http");
  const delay = Number(process.argv[process.argv.length - 1]);
  let arrived = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      arrived++;
      if (delay > 0) setTimeout(() => res.writeHead(204).end(), delay);
      else res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60000;
  let reported = 0;
  setInterval(() => { if (arrived !== reported) { reported = arrived; process.send(arrived); } }, 2).unref();
  server.listen(0, "127.0.0.1", () => process.send({ port: server.address().port }));
  process.on("disconnect", () => process.exit(0));
`;

async function startDelayedReceiver(delayMs: number): Promise<DelayedReceiver> {
  const child = fork("-e", [RECEIVER_SOURCE, String(delayMs)], {
    execArgv: [],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  let count = 0;
  let waiter: { n: number; resolve: () => void } | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    child.once("error", reject);
    child.on("message", (message: unknown) => {
      if (typeof message !== "number") return resolve((message as { port: number }).port);
      count = message;
      if (waiter && count >= waiter.n) waiter.resolve();
    });
  });
  return {
    url: `http://127.0.0.1:${port}/hook`,
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

/** Only this endpoint enabled, with this ordering (the queue is empty between drains). */
async function useEndpoint(ctx: AppContext, id: number, ordering: Ordering): Promise<void> {
  await ctx.db.updateTable("webhooks").set({ enabled: 0 }).execute();
  await ctx.db.updateTable("webhooks").set({ enabled: 1, ordering }).where("id", "=", id).execute();
}

/** A drain's deliveries/s, and µs of CPU per delivery of this process and of the database server. */
interface DrainFigures {
  rate: number;
  cpu: number;
  dbCpu: number;
}

/**
 * Queues `events` USER_JOINED_ROOM events over 100 rooms, then drains them (with
 * PARLEY_BENCH_CPU_PROFILE set, each drain's CPU profile is written there).
 */
async function drain(
  target: BenchTarget,
  receiver: DelayedReceiver,
  tag: string,
  events: number,
): Promise<DrainFigures> {
  const { ctx } = target;
  await inParallel(events, WRITERS, (i) =>
    ctx.database.transaction((tx) =>
      tx.emit("USER_JOINED_ROOM", {
        roomId: 1 + (i % ROOMS),
        username: `${tag}-${i}`,
        via: "membership",
      }),
    ),
  );
  if (ctx.dialect === "postgres")
    await sql`VACUUM ANALYZE webhook_deliveries, webhook_attempts`.execute(ctx.db);
  const dispatcher = await newDispatcher(ctx);
  const profiler = await drainProfiler();
  await profiler?.start();
  const base = receiver.count;
  const database = ctx.dialect === "postgres" ? postgresServerCpu() : undefined;
  const cpu = process.cpuUsage();
  const start = clock();
  dispatcher.start();
  await receiver.waitFor(base + events, 600_000);
  const elapsed = clock() - start;
  const used = process.cpuUsage(cpu);
  const dbUsed = database === undefined ? 0 : postgresServerCpuSince(database);
  await profiler?.stop(`ordered-${ctx.dialect}-${tag}`);
  await dispatcher.stop();
  return {
    rate: (events / elapsed) * 1000,
    cpu: (used.user + used.system) / events,
    dbCpu: dbUsed / events,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

export async function runOrderedLanesBench(options: OrderedLanesOptions): Promise<void> {
  console.log(
    `ordered lanes: ${options.events} events over ${ROOMS} rooms per drain, ${options.rounds} round(s); ` +
      `"endpoint" ordering: ${options.endpointEvents} events at 1 ms, ${Math.ceil(options.endpointEvents / 10)} at 50 ms`,
  );
  const lines: string[] = [];
  for (const open of await openTargets()) {
    const target = await open();
    const fast = await startDelayedReceiver(0);
    const oneMs = await startDelayedReceiver(1);
    const fiftyMs = await startDelayedReceiver(50);
    try {
      const plain = await addEndpoint(target.ctx, fast.url, SECRET);
      const endpoint1 = await addEndpoint(target.ctx, oneMs.url, SECRET);
      const endpoint50 = await addEndpoint(target.ctx, fiftyMs.url, SECRET);
      for (const id of [plain, endpoint1, endpoint50])
        await target.ctx.db
          .updateTable("webhooks")
          .set({ events: JSON.stringify(["USER_JOINED_ROOM"]) })
          .where("id", "=", id)
          .execute();
      // Warm-up: connections, plans, JIT.
      await useEndpoint(target.ctx, plain, "room");
      await drain(target, fast, "warm-room", 500);
      await useEndpoint(target.ctx, plain, "none");
      await drain(target, fast, "warm-none", 500);

      const rates: Record<"none" | "room", number[]> = { none: [], room: [] };
      for (let round = 0; round < options.rounds; round++) {
        const order: Array<"none" | "room"> = round % 2 === 0 ? ["none", "room"] : ["room", "none"];
        for (const ordering of order) {
          await useEndpoint(target.ctx, plain, ordering);
          const { rate, cpu, dbCpu } = await drain(
            target,
            fast,
            `${ordering}-${round}`,
            options.events,
          );
          rates[ordering].push(rate);
          console.log(
            `  ${target.name} round ${round + 1}: ordering ${ordering}: ${rate.toFixed(0)}/s, ` +
              `CPU ${cpu.toFixed(0)} µs per delivery` +
              (target.ctx.dialect === "postgres" ? ` + database ${dbCpu.toFixed(0)} µs` : ""),
          );
        }
      }
      await useEndpoint(target.ctx, endpoint1, "endpoint");
      const at1 = (await drain(target, oneMs, "endpoint-1ms", options.endpointEvents)).rate;
      await useEndpoint(target.ctx, endpoint50, "endpoint");
      const at50 = (
        await drain(target, fiftyMs, "endpoint-50ms", Math.ceil(options.endpointEvents / 10))
      ).rate;
      await useEndpoint(target.ctx, endpoint1, "none");
      const none1 = (await drain(target, oneMs, "none-1ms", options.endpointEvents)).rate;

      const none = median(rates.none);
      const room = median(rates.room);
      const ratio = room / none;
      lines.push(
        `${target.name}: drain over ${ROOMS} rooms, median of ${options.rounds}: none ${none.toFixed(0)}/s, ` +
          `room ${room.toFixed(0)}/s = ${(ratio * 100).toFixed(0)}% of none ` +
          `(target >= ${TARGET_RATIO * 100}%: ${ratio >= TARGET_RATIO ? "met" : "MISSED"})`,
        `${target.name}: "endpoint" (one in flight): ${at1.toFixed(0)}/s against a 1 ms receiver ` +
          `(${(1000 / at1).toFixed(2)} ms per delivery; "none" against it: ${none1.toFixed(0)}/s), ` +
          `${at50.toFixed(1)}/s against a 50 ms receiver (${(1000 / at50).toFixed(1)} ms per delivery)`,
      );
    } finally {
      await fast.close();
      await oneMs.close();
      await fiftyMs.close();
      await target.cleanup();
    }
  }
  console.log("\nordered lanes summary:");
  for (const line of lines) console.log(`  ${line}`);
}

export function orderedLanesOptionsFrom(values: {
  quick?: boolean | undefined;
  events?: string | undefined;
  rounds?: string | undefined;
}): OrderedLanesOptions {
  const base = values.quick ? ORDERED_LANES_QUICK : ORDERED_LANES_DEFAULTS;
  return {
    events: numberOption(values.events, base.events),
    rounds: numberOption(values.rounds, base.rounds),
    endpointEvents: base.endpointEvents,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: { quick: { type: "boolean" }, events: { type: "string" }, rounds: { type: "string" } },
  });
  await runOrderedLanesBench(orderedLanesOptionsFrom(values));
}
