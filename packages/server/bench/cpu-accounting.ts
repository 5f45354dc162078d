/**
 * CPU time of the processes a benchmark runs, read from /proc (Linux): each part's processes
 * (utime + stime of all their threads), the PostgreSQL server's processes that serve it, and the
 * whole machine (/proc/stat), so what other work on a shared machine took is visible too.
 *
 * PostgreSQL's share is the CPU of the client backends whose application_name starts with the
 * benchmark's tag (its pools connect with `?application_name=...`), plus the server's background
 * processes (WAL writer, checkpointer, background writer...). Other clients of the same server
 * are left out. A backend that exits during a measurement loses its time (the pools keep theirs
 * open while busy); a database on another machine shows as not measured.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import type pg from "pg";

const TICK_MICROS = (() => {
  try {
    return 1e6 / Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
  } catch {
    return 10_000;
  }
})();

/** utime + stime of one process (all its threads), in µs; undefined when it is not readable. */
export function processCpuMicros(pid: number): number | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // After "pid (comm) ": field 3 (state) first, so utime (14) and stime (15) are at 11 and 12.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_MICROS;
}

/**
 * utime + stime of each process of the local PostgreSQL server (its postmaster, backends and
 * background processes: every process named `postgres`), in µs by pid; empty when none is
 * readable (a database on another machine). Whatever else uses the server is counted too.
 */
export function postgresServerCpu(): Map<number, number> {
  const cpu = new Map<number, number>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let comm: string;
    try {
      comm = fs.readFileSync(`/proc/${entry}/comm`, "utf8").trim();
    } catch {
      continue;
    }
    if (comm !== "postgres") continue;
    const micros = processCpuMicros(Number(entry));
    if (micros !== undefined) cpu.set(Number(entry), micros);
  }
  return cpu;
}

/**
 * µs of CPU the PostgreSQL server's processes used since `before` (postgresServerCpu()): a process
 * started since counts whole, one that exited since loses what it used (pools keep their
 * connections open while busy).
 */
export function postgresServerCpuSince(before: Map<number, number>): number {
  let total = 0;
  for (const [pid, micros] of postgresServerCpu()) total += micros - (before.get(pid) ?? 0);
  return total;
}

/** Busy and total CPU time of the whole machine (every core), in µs. */
function machineCpu(): { busy: number; total: number } {
  const line = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!;
  // cpu user nice system idle iowait irq softirq steal (guest time is inside user already)
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line
    .trim()
    .split(/\s+/)
    .slice(1, 9)
    .map((value) => Number(value) * TICK_MICROS) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, total: busy + idle + iowait };
}

async function postgresCpu(admin: pg.Client, tag: string): Promise<Map<number, number>> {
  const { rows } = await admin.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
     WHERE left(application_name, length($1)) = $1 OR backend_type <> 'client backend'`,
    [tag],
  );
  const cpu = new Map<number, number>();
  for (const { pid } of rows) {
    const micros = processCpuMicros(pid);
    if (micros !== undefined) cpu.set(pid, micros);
  }
  return cpu;
}

export interface CpuUse {
  /** µs of CPU of each part, "PostgreSQL" among them (NaN when its processes are not readable). */
  parts: Record<string, number>;
  /** µs of CPU the rest of the machine used meanwhile (other work on a shared machine). */
  others: number;
  /** Share of the machine's CPU (all cores) busy meanwhile, 0..1. */
  machineBusy: number;
  elapsedMs: number;
}

/**
 * Starts a measurement of `parts` (name -> pids) and of PostgreSQL's processes serving clients
 * tagged `tag`; the function it answers ends it.
 */
export async function startCpuMeter(
  parts: Record<string, number[]>,
  admin: pg.Client,
  tag: string,
): Promise<() => Promise<CpuUse>> {
  const read = () =>
    Object.fromEntries(
      Object.entries(parts).map(([name, pids]) => [
        name,
        pids.reduce((sum, pid) => sum + (processCpuMicros(pid) ?? 0), 0),
      ]),
    );
  const pgBefore = await postgresCpu(admin, tag);
  const before = read();
  const machineBefore = machineCpu();
  const started = performance.now();
  return async () => {
    const after = read();
    const machineAfter = machineCpu();
    const elapsedMs = performance.now() - started;
    const pgAfter = await postgresCpu(admin, tag);
    let postgres = 0;
    for (const [pid, micros] of pgAfter) postgres += micros - (pgBefore.get(pid) ?? 0);
    const result: Record<string, number> = {};
    for (const name of Object.keys(parts)) result[name] = after[name]! - before[name]!;
    result.PostgreSQL = pgAfter.size ? postgres : NaN;
    const busy = machineAfter.busy - machineBefore.busy;
    const ours = Object.values(result).reduce((sum, v) => sum + (Number.isNaN(v) ? 0 : v), 0);
    return {
      parts: result,
      others: Math.max(0, busy - ours),
      machineBusy: busy / (machineAfter.total - machineBefore.total),
      elapsedMs,
    };
  };
}

/** The database URL with an application_name, so the meter can find its backends. */
export function taggedUrl(url: string, applicationName: string): string {
  const tagged = new URL(url);
  tagged.searchParams.set("application_name", applicationName);
  return tagged.toString();
}
