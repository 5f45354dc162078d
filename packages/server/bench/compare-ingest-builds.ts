// Ingest throughput of this checkout against another build of Parley, side by side in one run:
// for "within N% of before" questions on a machine whose speed moves between runs. Both builds
// serve at once (each a child process forked from its own ingest.bench.ts, so each runs its own
// source); every round loads one then the other, the side that goes first alternating, and the
// figure is the median of the per-round ratios (after / before), so a slow minute hits both
// sides of the rounds it falls in. Settings as ingest.bench.ts: logging off, the ingest limit out
// of the way, one outbound endpoint subscribed (every post writes its delivery row).
//
// The other build: a worktree of an older commit with its node_modules linked to this checkout's
// (its own packages under @parley) and `npm run build` run there, for example
//   git worktree add /tmp/wt-before <commit>
// Run: npx tsx packages/server/bench/compare-ingest-builds.ts --before /tmp/wt-before
//        [--rounds 8] [--duration 6] [--connections 50] [--otlp]
// --otlp: this checkout's server exports OpenTelemetry spans to a local OTLP/HTTP receiver.
// --before-env / --after-env NAME=VALUE: set in one side's server only (with --before ., this build
// against itself: PARLEY_BENCH_WITHOUT_SEARCH=1 measures what the search index costs a post; run
// it both ways round, the ratio being the geometric mean of one and the inverse of the other).
// On PostgreSQL, the CPU of the database server's processes per request is shown too.
// SQLite always; PostgreSQL too when PARLEY_TEST_DATABASE_URL is set. Not part of run-all.ts.
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import * as after from "./ingest.bench.js";
import { postgresServerCpu, postgresServerCpuSince, processCpuMicros } from "./cpu-accounting.js";
import { numberOption } from "./number-option.js";

type IngestBench = Pick<typeof after, "start" | "stop" | "loadUrls">;
type Server = Awaited<ReturnType<IngestBench["start"]>>;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const url = (server: Server) => `http://127.0.0.1:${server.ready.port}${server.ready.path}`;

async function compare(
  dialect: "sqlite" | "postgres",
  before: IngestBench,
  options: {
    rounds: number;
    duration: number;
    connections: number;
    /** Added to the environment of this checkout's server only (e.g. OpenTelemetry export). */
    afterEnv?: NodeJS.ProcessEnv;
    /** Added to the environment of the other build's server only (e.g. PARLEY_BENCH_WITHOUT_SEARCH). */
    beforeEnv?: NodeJS.ProcessEnv;
  },
) {
  const sides = { before, after } as const;
  const servers: Partial<Record<keyof typeof sides, Server>> = {};
  const rps: Record<keyof typeof sides, number[]> = { before: [], after: [] };
  // CPU of the server process per request (µs): steadier than req/s when the machine is shared.
  const cpu: Record<keyof typeof sides, number[]> = { before: [], after: [] };
  // On PostgreSQL, the CPU of the database server's processes meanwhile (its backends do the
  // statements' work: index upkeep, WAL) per request.
  const dbCpu: Record<keyof typeof sides, number[]> = { before: [], after: [] };
  const ratios: number[] = [];
  try {
    for (const side of ["before", "after"] as const) {
      const extra = side === "after" ? options.afterEnv : options.beforeEnv;
      servers[side] = await sides[side].start(
        dialect,
        extra ? { ...process.env, ...extra } : undefined,
      );
    }
    for (const side of ["before", "after"] as const) {
      await after.loadUrls([url(servers[side]!)], 2, options.connections);
    }
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 ? (["after", "before"] as const) : (["before", "after"] as const);
      const got: Partial<Record<keyof typeof sides, number>> = {};
      for (const side of order) {
        const pid = servers[side]!.process.pid!;
        const cpuBefore = processCpuMicros(pid) ?? 0;
        const dbBefore = dialect === "postgres" ? postgresServerCpu() : undefined;
        const run = await after.loadUrls(
          [url(servers[side]!)],
          options.duration,
          options.connections,
        );
        cpu[side].push(((processCpuMicros(pid) ?? 0) - cpuBefore) / (run.rps * options.duration));
        if (dialect === "postgres")
          dbCpu[side].push(postgresServerCpuSince(dbBefore!) / (run.rps * options.duration));
        if (run.non2xx || run.errors)
          throw new Error(`${side}: ${run.non2xx} non-2xx, ${run.errors} errors`);
        got[side] = run.rps;
        rps[side].push(run.rps);
      }
      ratios.push(got.after! / got.before!);
      console.log(
        `  ${dialect} round ${round + 1}: before ${got.before!.toFixed(0).padStart(6)}  after ${got.after!.toFixed(0).padStart(6)} req/s  after/before ${ratios.at(-1)!.toFixed(3)}` +
          `  CPU µs/request ${cpu.before.at(-1)!.toFixed(0)} / ${cpu.after.at(-1)!.toFixed(0)}` +
          (dialect === "postgres"
            ? `  PostgreSQL ${dbCpu.before.at(-1)!.toFixed(0)} / ${dbCpu.after.at(-1)!.toFixed(0)}`
            : ""),
      );
    }
  } finally {
    for (const [side, server] of Object.entries(servers)) {
      await sides[side as keyof typeof sides].stop(server);
    }
  }
  return {
    dialect,
    before: median(rps.before),
    after: median(rps.after),
    ratio: median(ratios),
    cpuBefore: median(cpu.before),
    cpuAfter: median(cpu.after),
    dbCpuBefore: dbCpu.before.length ? median(dbCpu.before) : undefined,
    dbCpuAfter: dbCpu.after.length ? median(dbCpu.after) : undefined,
    low: Math.min(...ratios),
    high: Math.max(...ratios),
  };
}

async function main() {
  const { values } = parseArgs({
    options: {
      before: { type: "string" },
      rounds: { type: "string" },
      duration: { type: "string" },
      connections: { type: "string" },
      otlp: { type: "boolean" },
      "before-env": { type: "string", multiple: true },
      "after-env": { type: "string", multiple: true },
    },
  });
  if (!values.before) throw new Error("--before <checkout of the other build> is required");
  const beforePath = path.resolve(values.before, "packages/server/bench/ingest.bench.ts");
  const before = (await import(pathToFileURL(beforePath).href)) as IngestBench;
  const options: Parameters<typeof compare>[2] = {
    rounds: numberOption(values.rounds, 8),
    duration: numberOption(values.duration, 6),
    connections: numberOption(values.connections, 50),
  };
  // --before-env / --after-env NAME=VALUE (repeatable): set for one side's server only; with
  // --before . this build against itself with one thing changed (PARLEY_BENCH_WITHOUT_SEARCH=1),
  // which can be run both ways round to cancel a bias of either side.
  const envOf = (pairs: string[] | undefined) =>
    pairs?.length
      ? Object.fromEntries(
          pairs.map((pair) => {
            const at = pair.indexOf("=");
            if (at < 1) throw new Error(`--before-env/--after-env want NAME=VALUE, got ${pair}`);
            return [pair.slice(0, at), pair.slice(at + 1)];
          }),
        )
      : undefined;
  options.beforeEnv = envOf(values["before-env"]);
  options.afterEnv = envOf(values["after-env"]);
  console.log(
    `ingest, this checkout against ${values.before}: ${options.rounds} rounds x ${options.duration} s, ${options.connections} connections, ${os.cpus().length} CPUs`,
  );
  // --otlp: this checkout's server exports its spans to a local OTLP/HTTP receiver (answers 200).
  let collector: http.Server | undefined;
  if (values.otlp) {
    collector = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
    });
    await new Promise<void>((resolve) => collector!.listen(0, "127.0.0.1", resolve));
    const { port } = collector.address() as AddressInfo;
    options.afterEnv = {
      ...options.afterEnv,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${port}/v1/traces`,
    };
    console.log(`  this checkout exports its spans to http://127.0.0.1:${port}/v1/traces`);
  }
  const dialects: Array<"sqlite" | "postgres"> = process.env.PARLEY_TEST_DATABASE_URL
    ? ["sqlite", "postgres"]
    : ["sqlite"];
  const results = [];
  for (const dialect of dialects) results.push(await compare(dialect, before, options));
  collector?.close();
  console.log(
    "\nmedians              before    after  after/before (median of rounds, range)  server CPU µs/request before / after  (PostgreSQL server's)",
  );
  for (const r of results) {
    console.log(
      `  ${r.dialect.padEnd(16)} ${r.before.toFixed(0).padStart(7)}  ${r.after.toFixed(0).padStart(7)}  ${r.ratio.toFixed(3)} (${r.low.toFixed(3)} to ${r.high.toFixed(3)})  ${r.cpuBefore.toFixed(0)} / ${r.cpuAfter.toFixed(0)}` +
        (r.dbCpuBefore !== undefined
          ? `  (${r.dbCpuBefore.toFixed(0)} / ${r.dbCpuAfter!.toFixed(0)})`
          : ""),
    );
  }
}

await main();
