/**
 * Send threads (PARLEY_WEBHOOK_SEND_THREADS), side by side in one run on each database: the same
 * engine sending on the main thread (0), on one worker thread and on two, in `--rounds`
 * alternating rounds (each round in the other order than the last), each with
 *
 * - a drain of `--events` deliveries queued while no dispatcher runs (the engine alone), and
 * - a burst of as many complete chat posts by 16 writers while the engine sends (end to end).
 *
 * Printed per variant (medians): deliveries/s, the process's CPU per delivery (every thread), the
 * main thread's busy time per delivery (its event loop utilization: what claims, records, posts
 * and, with 0 threads, sends), the receiver's and (PostgreSQL) the database server's CPU per
 * delivery, and the burst's commit-to-arrival p50/p99. The receiver runs in a process of its own;
 * each sender's threads are started before its drain or burst is timed (a server starts them
 * once). From the busy times, the estimate for 4 and 8 cores: see docs/performance.md.
 *
 *   npx tsx bench/send-threads.bench.ts [--quick] [--events N] [--rounds N] [--threads 0,1,2]
 */
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { AppContext } from "../src/app-context.js";
import { createMetrics } from "../src/operations/metrics.js";
import {
  createDispatcher,
  senderFor,
} from "../src/webhooks/outbound/delivery-engine/create-dispatcher.js";
import { createDeliveryMetrics } from "../src/webhooks/outbound/delivery-engine/delivery-metrics.js";
import type { Dispatcher } from "../src/webhooks/outbound/delivery-engine/dispatcher.js";
import { median, openTargets } from "./bench-targets.js";
import {
  openParleySide,
  parleyBurst,
  parleyDrain,
  warmUp,
  type MakeDispatcher,
} from "./delivery.bench.js";
import { numberOption } from "./number-option.js";

export interface SendThreadsOptions {
  events: number;
  rounds: number;
  threads: number[];
}

export const SEND_THREADS_DEFAULTS: SendThreadsOptions = {
  events: 5_000,
  rounds: 3,
  threads: [0, 1, 2],
};
export const SEND_THREADS_QUICK: SendThreadsOptions = {
  events: 1_500,
  rounds: 1,
  threads: [0, 1, 2],
};

const WRITERS = 16;

/** A dispatcher whose sender runs on `threads` worker threads (0: the main thread), started. */
function dispatcherWith(threads: number): MakeDispatcher {
  return async (ctx: AppContext): Promise<Dispatcher> => {
    const sender = senderFor({ ...ctx.config, webhookSendThreads: threads });
    await sender.ready?.();
    const metrics = createDeliveryMetrics(ctx.db, createMetrics().registry, ctx.now);
    return createDispatcher(ctx, metrics, { sender });
  };
}

interface Figures {
  rate: number;
  cpu: number;
  main: number;
  receiver: number;
  database: number;
  burstRate: number;
  p50: number;
  p99: number;
}

export async function runSendThreadsBench(options: SendThreadsOptions): Promise<void> {
  const lines: string[] = [];
  for (const open of await openTargets()) {
    const side = await openParleySide(open);
    const { target } = side;
    const postgres = target.ctx.dialect === "postgres";
    try {
      await warmUp(side, WRITERS);
      const figures = new Map<number, Figures[]>(options.threads.map((n) => [n, []]));
      for (let round = 0; round < options.rounds; round++) {
        const order = round % 2 === 0 ? options.threads : [...options.threads].reverse();
        for (const threads of order) {
          const make = dispatcherWith(threads);
          const drain = await parleyDrain(
            side,
            `t${threads}-r${round}`,
            {
              events: options.events,
              writers: WRITERS,
            },
            make,
          );
          const burst = await parleyBurst(side, { events: options.events, writers: WRITERS }, make);
          const row: Figures = {
            rate: drain.rate,
            cpu: drain.cpuMicros,
            main: drain.mainMicros ?? NaN,
            receiver: drain.receiverMicros ?? NaN,
            database: drain.databaseMicros ?? NaN,
            burstRate: burst.rate,
            p50: burst.p50,
            p99: burst.p99,
          };
          figures.get(threads)!.push(row);
          console.log(
            `${target.name} round ${round + 1}, ${threads} send thread(s): drain ${row.rate.toFixed(0)}/s, ` +
              `CPU ${row.cpu.toFixed(0)} µs (main thread ${row.main.toFixed(0)} µs), receiver ${row.receiver.toFixed(0)} µs` +
              (postgres ? `, database ${row.database.toFixed(0)} µs` : "") +
              `; burst ${row.burstRate.toFixed(0)}/s, p50 ${row.p50.toFixed(1)} ms, p99 ${row.p99.toFixed(1)} ms`,
          );
        }
      }
      const of = (threads: number, key: keyof Figures) =>
        median(figures.get(threads)!.map((row) => row[key]));
      const base = options.threads[0]!;
      for (const threads of options.threads) {
        lines.push(
          `${target.name}, ${threads} send thread(s): drain ${of(threads, "rate").toFixed(0)}/s ` +
            `(${((of(threads, "rate") / of(base, "rate")) * 100).toFixed(0)}% of ${base}), ` +
            `CPU ${of(threads, "cpu").toFixed(0)} µs per delivery, main thread ${of(threads, "main").toFixed(0)} µs` +
            (postgres ? `, database ${of(threads, "database").toFixed(0)} µs` : "") +
            `; burst ${of(threads, "burstRate").toFixed(0)}/s ` +
            `(${((of(threads, "burstRate") / of(base, "burstRate")) * 100).toFixed(0)}% of ${base}), ` +
            `p50 ${of(threads, "p50").toFixed(1)} ms, p99 ${of(threads, "p99").toFixed(1)} ms`,
        );
      }
    } finally {
      await side.receiver.close();
      await target.cleanup();
    }
  }
  console.log(
    `\nsend threads summary (medians of ${options.rounds} rounds, ${options.events} deliveries each):`,
  );
  for (const line of lines) console.log(`  ${line}`);
}

export function sendThreadsOptionsFrom(values: {
  quick?: boolean | undefined;
  events?: string | undefined;
  rounds?: string | undefined;
  threads?: string | undefined;
}): SendThreadsOptions {
  const base = values.quick ? SEND_THREADS_QUICK : SEND_THREADS_DEFAULTS;
  return {
    events: numberOption(values.events, base.events),
    rounds: numberOption(values.rounds, base.rounds),
    threads:
      values.threads === undefined
        ? base.threads
        : values.threads.split(",").map((n) => numberOption(n.trim(), 0)),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean" },
      events: { type: "string" },
      rounds: { type: "string" },
      threads: { type: "string" },
    },
  });
  await runSendThreadsBench(sendThreadsOptionsFrom(values));
}
