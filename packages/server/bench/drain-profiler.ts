// PARLEY_BENCH_CPU_PROFILE=<dir>: a V8 CPU profile of each timed drain of the benchmark's process
// (its main thread), written to <dir>/<name>.cpuprofile; read with Chrome's DevTools or any
// .cpuprofile reader. Used by delivery.bench.ts, ordered-lanes.bench.ts, compare-drain-builds.ts.
import { writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import path from "node:path";

export interface DrainProfiler {
  start(): Promise<void>;
  /** Stops the profile started last and writes it as `<name>.cpuprofile`. */
  stop(name: string): Promise<void>;
}

/** The profiler of this process, or undefined when PARLEY_BENCH_CPU_PROFILE is unset. */
export async function drainProfiler(): Promise<DrainProfiler | undefined> {
  const dir = process.env.PARLEY_BENCH_CPU_PROFILE;
  if (!dir) return undefined;
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  return {
    start: async () => void (await session.post("Profiler.start")),
    async stop(name) {
      const { profile } = await session.post("Profiler.stop");
      await writeFile(path.join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    },
  };
}
