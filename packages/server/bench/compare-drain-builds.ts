// The delivery engine's drain of this checkout against another build of Parley, side by side in
// one run: for "within N% of before" questions on a machine whose speed moves between runs. Each
// round starts one process per build (this file, forked, loading that build's own bench modules:
// bench-targets.ts, delivery.bench.ts, in-parallel.ts, so each runs its own engine), the side
// that goes first alternating; each process queues `events` deliveries to one loopback receiver
// answering 204 (16 writers), drains them with a fresh dispatcher, after a warm-up drain of 2,000,
// `drains` times. The figures are medians over every drain of each side: deliveries per second,
// CPU of the process per delivery and, on PostgreSQL, that of the database server's processes (a
// VACUUM ANALYZE and a CHECKPOINT before each drain, so what queueing left to write is not counted).
//
// The other build: a worktree of an older commit with its node_modules linked to this checkout's
// (its own packages under @parley) and `npm run build` run there, as for compare-ingest-builds.ts:
//   git worktree add /tmp/wt-before <commit>
// Run: npx tsx packages/server/bench/compare-drain-builds.ts --before /tmp/wt-before
//        [--rounds 8] [--events 5000] [--drains 2] [--only sqlite|postgres]
// SQLite always; PostgreSQL too when PARLEY_TEST_DATABASE_URL is set. Not part of run-all.ts.
// PARLEY_BENCH_SEND_THREADS=<n>: this build sends through n send threads instead of its config's
// default (a build from before send threads has none: 0 compares the engines alone).
// PARLEY_BENCH_CPU_PROFILE=<dir>: each process writes a V8 CPU profile of its timed drains (the
// warm-up and the queueing left out) to <dir>/<before|after>-<dialect>-<pid>-<drain>.cpuprofile.
import { fork } from "node:child_process";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { median } from "./bench-targets.js";
import type * as BenchTargets from "./bench-targets.js";
import { postgresServerCpu, postgresServerCpuSince } from "./cpu-accounting.js";
import type * as DeliveryBench from "./delivery.bench.js";
import type * as InParallel from "./in-parallel.js";
import { drainProfiler } from "./drain-profiler.js";
import { numberOption } from "./number-option.js";

type Dialect = "sqlite" | "postgres";

interface Drain {
  /** Deliveries per second. */
  rate: number;
  /** µs of CPU of the process per delivery. */
  cpu: number;
  /** µs of CPU of the PostgreSQL server's processes per delivery (0 on SQLite). */
  dbCpu: number;
}

/** In the forked process: the drains of the build at `tree`, reported to the parent. */
async function serve(tree: string, side: string, dialect: Dialect, events: number, drains: number) {
  const profiler = await drainProfiler();
  const bench = (name: string) =>
    import(pathToFileURL(path.join(tree, "packages/server/bench", name)).href);
  const targets = (await bench("bench-targets.ts")) as typeof BenchTargets;
  const delivery = (await bench("delivery.bench.ts")) as typeof DeliveryBench;
  const { inParallel } = (await bench("in-parallel.ts")) as typeof InParallel;
  const target =
    dialect === "postgres"
      ? await targets.openPostgresTarget(process.env.PARLEY_TEST_DATABASE_URL!)
      : await targets.openSqliteTarget();
  const { ctx } = target;
  const threads = process.env.PARLEY_BENCH_SEND_THREADS;
  if (threads !== undefined) ctx.config.webhookSendThreads = Number(threads);
  const receiver = await delivery.startReceiver();
  try {
    await delivery.addEndpoint(ctx, receiver.url, delivery.SECRET);
    for (let drain = -1; drain < drains; drain++) {
      const n = drain < 0 ? 2_000 : events;
      await inParallel(n, 16, (i) => delivery.emit(ctx, `d${drain}-${i}`));
      if (ctx.dialect === "postgres") {
        const { sql } = await import("kysely");
        await sql`VACUUM ANALYZE webhook_deliveries, webhook_attempts`.execute(ctx.db);
        // The queueing's dirty pages written out now, not by the checkpointer during the drain
        // (where their CPU would count against it); needs a superuser, else skipped.
        await sql`CHECKPOINT`.execute(ctx.db).catch(() => undefined);
      }
      // Awaited: a build's newDispatcher may start its sender's threads first (not timed).
      const dispatcher = await delivery.newDispatcher(ctx);
      if (drain >= 0) await profiler?.start();
      const base = receiver.count;
      const db = dialect === "postgres" ? postgresServerCpu() : undefined;
      const cpu = process.cpuUsage();
      const started = performance.now();
      dispatcher.start();
      await receiver.waitFor(base + n, 300_000);
      const elapsed = performance.now() - started;
      const used = process.cpuUsage(cpu);
      const dbUsed = db ? postgresServerCpuSince(db) : 0;
      if (drain >= 0) await profiler?.stop(`${side}-${dialect}-${process.pid}-${drain}`);
      await dispatcher.stop();
      if (drain >= 0)
        process.send!({
          drain: {
            rate: (n / elapsed) * 1000,
            cpu: (used.user + used.system) / n,
            dbCpu: dbUsed / n,
          } satisfies Drain,
        });
    }
  } finally {
    await receiver.close();
    await target.cleanup();
  }
}

function runSide(
  tree: string,
  side: string,
  dialect: Dialect,
  events: number,
  drains: number,
): Promise<Drain[]> {
  return new Promise((resolve, reject) => {
    const got: Drain[] = [];
    const child = fork(
      fileURLToPath(import.meta.url),
      [
        "--serve",
        tree,
        "--side",
        side,
        "--dialect",
        dialect,
        "--events",
        String(events),
        "--drains",
        String(drains),
      ],
      { stdio: ["ignore", "ignore", "inherit", "ipc"] },
    );
    child.on("message", (message: { drain?: Drain }) => {
      if (message.drain) got.push(message.drain);
    });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 && got.length === drains
        ? resolve(got)
        : reject(new Error(`the drain of ${tree} exited with ${code} after ${got.length} drains`)),
    );
  });
}

async function compare(
  dialect: Dialect,
  trees: { before: string; after: string },
  options: { rounds: number; events: number; drains: number },
) {
  const drains: Record<"before" | "after", Drain[]> = { before: [], after: [] };
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 ? (["after", "before"] as const) : (["before", "after"] as const);
    for (const side of order) {
      const got = await runSide(trees[side], side, dialect, options.events, options.drains);
      drains[side].push(...got);
      console.log(
        `  ${dialect} round ${round + 1} ${side.padEnd(6)} ` +
          got
            .map(
              (d) =>
                `${d.rate.toFixed(0)}/s ${d.cpu.toFixed(0)} µs` +
                (dialect === "postgres" ? ` + ${d.dbCpu.toFixed(0)} µs` : ""),
            )
            .join(", "),
      );
    }
  }
  const figures = (side: "before" | "after") => ({
    rate: median(drains[side].map((d) => d.rate)),
    cpu: median(drains[side].map((d) => d.cpu)),
    dbCpu: median(drains[side].map((d) => d.dbCpu)),
  });
  return { dialect, before: figures("before"), after: figures("after") };
}

async function main() {
  const { values } = parseArgs({
    options: {
      before: { type: "string" },
      rounds: { type: "string" },
      events: { type: "string" },
      drains: { type: "string" },
      only: { type: "string" },
      serve: { type: "string" },
      side: { type: "string" },
      dialect: { type: "string" },
    },
  });
  const events = numberOption(values.events, 5_000);
  const drains = numberOption(values.drains, 2);
  if (values.serve) {
    await serve(values.serve, values.side ?? "after", values.dialect as Dialect, events, drains);
    process.exit(0);
  }
  if (!values.before) throw new Error("--before <checkout of the other build> is required");
  const trees = {
    before: path.resolve(values.before),
    after: path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../.."),
  };
  const rounds = numberOption(values.rounds, 8);
  const dialects: Dialect[] = (
    process.env.PARLEY_TEST_DATABASE_URL ? ["sqlite", "postgres"] : ["sqlite"]
  ).filter((d) => !values.only || d === values.only) as Dialect[];
  console.log(
    `drain, this checkout against ${values.before}: ${rounds} rounds x ${drains} drains of ${events}, one endpoint, 16 in flight`,
  );
  const results = [];
  for (const dialect of dialects) {
    results.push(await compare(dialect, trees, { rounds, events, drains }));
  }
  console.log(
    "\nmedians          before          after          after/before by rate, by CPU (process + database)",
  );
  for (const { dialect, before, after } of results) {
    const total = (f: typeof before) => f.cpu + f.dbCpu;
    const cpuText = (f: typeof before) =>
      `${f.cpu.toFixed(0)}${dialect === "postgres" ? ` + ${f.dbCpu.toFixed(0)}` : ""} µs`;
    console.log(
      `  ${dialect.padEnd(10)} ${before.rate.toFixed(0).padStart(6)}/s ${cpuText(before).padEnd(14)} ` +
        `${after.rate.toFixed(0).padStart(6)}/s ${cpuText(after).padEnd(14)} ` +
        `${(after.rate / before.rate).toFixed(3)}, ${(total(before) / total(after)).toFixed(3)}`,
    );
  }
}

await main();
