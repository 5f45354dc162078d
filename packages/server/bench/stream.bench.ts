// The live stream under load: 2,000 WebSocket clients subscribed to one room, 200 messages/s
// posted through the API, and for every (message, client) pair the time from just before the POST
// to the frame's arrival at the client's socket. Also the server's peak RSS and where the CPU went.
//
// Three kinds of process, as in a deployment: the server(s) (`parley serve`, the built CLI, on
// loopback); the clients, in `--client-procs` processes of their own (bench/stream-clients.ts);
// and this process, which only posts and measures. The post time travels in the message's content
// on CLOCK_MONOTONIC, which every process shares, so a client computes the latency the moment it
// reads the frame. First one process on SQLite (`--rounds` times; with `--compare <cli.js>`, a
// round runs that other build first and then this one, side by side on the same noisy machine);
// then, when PARLEY_TEST_DATABASE_URL is set, two processes on one PostgreSQL database (clients
// split between them, posts alternating). Targets: p99 under 100 ms, RSS under 500 MB.
//
// Run: npx tsx packages/server/bench/stream.bench.ts [--clients 2000] [--rate 200] [--seconds 5]
//        [--client-procs 2] [--rounds 1] [--compare path/to/other/dist/cli.js] [--cpu-prof dir]
//        [--server-env PARLEY_STREAM_COALESCE_MS=0 ...]
// (also part of `npm run bench -w @parley/server`, through bench/run-all.ts; needs the build)
import { fork, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { POSTGRES, TEST_DATABASE_URL } from "../test/helpers/dialects.js";
import { killAllServers, spawnServer, type SpawnedServer } from "../test/helpers/spawn-server.js";
import { sharedClockMs, type ClientReport, type ParentMessage } from "./stream-clients.js";

export interface StreamBenchOptions {
  clients: number;
  rate: number;
  seconds: number;
  /** Processes the clients are spread over. */
  clientProcs?: number;
  /** SQLite rounds (medians are printed when more than one). */
  rounds?: number;
  /** Another build's dist/cli.js, run side by side with this one in every SQLite round. */
  compare?: string;
  /** Directory for the server processes' V8 CPU profiles (node --cpu-prof). */
  cpuProf?: string;
  /** Settings for every server process (e.g. PARLEY_STREAM_COALESCE_MS). */
  serverEnv?: Record<string, string>;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

function call<T>(base: string, token: string, method: string, url: string, body?: unknown) {
  return new Promise<T>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const request = http.request(
      `${base}${url}`,
      {
        method,
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          ...(payload ? { "content-type": "application/json" } : {}),
        },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () =>
          (res.statusCode ?? 500) < 300
            ? resolve((text ? JSON.parse(text) : undefined) as T)
            : reject(new Error(`${method} ${url}: ${res.statusCode} ${text}`)),
        );
      },
    );
    request.on("error", reject);
    request.end(payload);
  });
}

function rssMb(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

const TICK_MS = 1000 / 100; // USER_HZ: /proc reports CPU time in 1/100 s

/** A process's user and system (kernel) CPU time so far, in ms, from /proc/<pid>/stat. */
function processCpuMs(pid: number): { user: number; system: number } {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { user: Number(fields[11]) * TICK_MS, system: Number(fields[12]) * TICK_MS };
  } catch {
    return { user: 0, system: 0 };
  }
}

/**
 * The whole machine's CPU time so far, in ms (every process, every core): busy in all, and the
 * part spent in interrupts, where the kernel does a loopback TCP write's receive side (charged to
 * no process: neither the server's nor the clients' own figures include it).
 */
function machineCpuMs(): { busy: number; interrupts: number } {
  const line = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!;
  const [user, nice, system, , , irq, softirq, steal] = line
    .split(/\s+/)
    .slice(1)
    .map((field) => Number(field) * TICK_MS);
  return {
    busy: user! + nice! + system! + irq! + softirq! + steal!,
    interrupts: irq! + softirq!,
  };
}

/** The stream's frame and write counters from a server's /metrics. */
async function streamCounters(base: string): Promise<{ frames: number; writes: number }> {
  const text = await new Promise<string>((resolve, reject) =>
    http
      .get(`${base}/metrics`, { agent }, (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString()));
        res.on("end", () => resolve(body));
      })
      .on("error", reject),
  );
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? NaN);
  return {
    frames: read("parley_stream_frames_sent_total"),
    writes: read("parley_stream_writes_total"),
  };
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** One client process: sends it a command and waits for the answer of the given type. */
class ClientProcess {
  private readonly child: ChildProcess;
  constructor() {
    const script = fileURLToPath(new URL("./stream-clients.ts", import.meta.url));
    // The tsx loader this process runs under is in execArgv, which fork passes on.
    this.child = fork(script, ["--stream-clients"], {
      serialization: "advanced",
      stdio: "inherit",
    });
  }
  get pid(): number {
    return this.child.pid!;
  }
  request<T>(message: ParentMessage, answer?: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) =>
        reject(new Error(`a client process exited (${code})`));
      this.child.once("exit", onExit);
      if (answer)
        this.child.once("message", (reply: T) => {
          this.child.off("exit", onExit);
          resolve(reply);
        });
      this.child.send(message, (error) => {
        if (error) reject(error);
        else if (!answer) {
          this.child.off("exit", onExit);
          resolve(undefined as T);
        }
      });
    });
  }
  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.send({ type: "close" } satisfies ParentMessage);
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

export interface PhaseResult {
  label: string;
  /** The POST requests' own duration (answered after the commit). */
  postP50: number;
  postP99: number;
  p50: number;
  p99: number;
  max: number;
  framesPerSecond: number;
  complete: boolean;
  rssMb: number;
  /** CPU ms over the posting and drain window. */
  serverCpu: { user: number; system: number };
  clientCpu: { user: number; system: number };
  /** Interrupt time of the whole machine (the loopback's receive side, mostly). */
  interruptCpu: number;
  /** Everything else on the machine (other work, PostgreSQL, this process). */
  otherCpu: number;
  windowMs: number;
  frames: number;
  /** Frames per socket write (system call) on the server(s), from their /metrics. */
  framesPerWrite: number;
}

async function runPhase(
  label: string,
  servers: SpawnedServer[],
  adminToken: string,
  options: StreamBenchOptions,
): Promise<PhaseResult> {
  const a = servers[0]!;
  // 50 users, each with clients/50 connections (a user's tabs), all members of one room.
  const users: Array<{ token: string }> = [];
  const tag = `${label.replace(/\W/g, "").toLowerCase()}${Date.now().toString(36)}`;
  for (let i = 0; i < 50; i++) {
    const user = await call<{ id: number }>(a.url, adminToken, "POST", "/api/admin/users", {
      username: `bench-${tag}-${i}`,
      role: "user",
    });
    const { token } = await call<{ token: string }>(
      a.url,
      adminToken,
      "POST",
      `/api/admin/users/${user.id}/tokens`,
    );
    users.push({ token });
  }
  const room = await call<{ id: number }>(a.url, users[0]!.token, "POST", "/api/rooms", {
    name: "bench",
  });
  for (const user of users.slice(1))
    await call(a.url, user.token, "POST", `/api/rooms/${room.id}/join`);

  const total = Math.round(options.rate * options.seconds);
  const procs = Math.max(1, Math.min(options.clientProcs ?? 2, options.clients));
  const clientProcesses = Array.from({ length: procs }, () => new ClientProcess());
  try {
    // Client k of the whole benchmark goes to server k % servers and to process k % procs; each
    // process connects its share to each server.
    const connectStart = performance.now();
    await Promise.all(
      clientProcesses.map(async (proc, p) => {
        const mine = Math.floor(options.clients / procs) + (p < options.clients % procs ? 1 : 0);
        for (let s = 0; s < servers.length; s++) {
          const count = Math.floor(mine / servers.length) + (s < mine % servers.length ? 1 : 0);
          await proc.request(
            {
              type: "connect",
              url: servers[s]!.url,
              tokens: users.map((user) => user.token),
              roomId: room.id,
              count,
              expected: total * count,
            },
            "connected",
          );
        }
      }),
    );
    const connectMs = performance.now() - connectStart;

    let peakRss = Math.max(...servers.map((server) => rssMb(server.pid)));
    const rssTimer = setInterval(() => {
      for (const server of servers) peakRss = Math.max(peakRss, rssMb(server.pid));
    }, 100);
    await Promise.all(clientProcesses.map((proc) => proc.request({ type: "start" })));
    const counters0 = await Promise.all(servers.map((server) => streamCounters(server.url)));
    const serverCpu0 = servers.map((server) => processCpuMs(server.pid));
    const machine0 = machineCpuMs();

    // The poster: `rate` messages per second, spread over the servers, paced by the clock. Each
    // message carries its post time on the shared clock, taken just before its request.
    const started = sharedClockMs();
    let sent = 0;
    // How long each POST took (the API's answer, after the commit): the part of the latency that
    // is not the stream's.
    const postMs = new Float64Array(total);
    const posts: Array<Promise<unknown>> = [];
    await new Promise<void>((resolve) => {
      const tick = () => {
        const due = Math.min(
          total,
          Math.floor(((sharedClockMs() - started) / 1000) * options.rate),
        );
        while (sent < due) {
          const i = sent++;
          const server = servers[i % servers.length]!;
          const postedAt = sharedClockMs();
          posts.push(
            call(
              server.url,
              users[i % users.length]!.token,
              "POST",
              `/api/rooms/${room.id}/messages`,
              {
                content: `bench ${i} ${postedAt.toFixed(3)}`,
              },
            ).then(() => (postMs[i] = sharedClockMs() - postedAt)),
          );
        }
        if (sent >= total) resolve();
        else setTimeout(tick, 2);
      };
      tick();
    });
    await Promise.all(posts);

    // Drain: every frame in, or 10 s.
    const expected = total * options.clients;
    const deadline = performance.now() + 10_000;
    let reports: ClientReport[] = [];
    for (;;) {
      reports = await Promise.all(
        clientProcesses.map((proc) => proc.request<ClientReport>({ type: "report" }, "report")),
      );
      const frames = reports.reduce((sum, report) => sum + report.frames, 0);
      if (frames >= expected || performance.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const lastArrival = Math.max(...reports.map((report) => report.lastArrival));
    const windowMs = lastArrival - started;
    const machine1 = machineCpuMs();
    const serverCpu = servers
      .map((server, s) => {
        const now = processCpuMs(server.pid);
        return { user: now.user - serverCpu0[s]!.user, system: now.system - serverCpu0[s]!.system };
      })
      .reduce((sum, cpu) => ({ user: sum.user + cpu.user, system: sum.system + cpu.system }));
    const clientCpu = reports
      .map((report) => ({ user: report.cpu.user / 1000, system: report.cpu.system / 1000 }))
      .reduce((sum, cpu) => ({ user: sum.user + cpu.user, system: sum.system + cpu.system }));
    clearInterval(rssTimer);
    const counters1 = await Promise.all(servers.map((server) => streamCounters(server.url)));
    const serverFrames = counters1.reduce((sum, c, s) => sum + c.frames - counters0[s]!.frames, 0);
    const serverWrites = counters1.reduce((sum, c, s) => sum + c.writes - counters0[s]!.writes, 0);

    const samples = reports.reduce((sum, report) => sum + report.latencies.length, 0);
    const all = new Float64Array(samples);
    let at = 0;
    for (const report of reports) {
      all.set(report.latencies, at);
      at += report.latencies.length;
    }
    const sorted = all.sort();
    const frames = reports.reduce((sum, report) => sum + report.frames, 0);
    const posted = postMs.sort();
    const result: PhaseResult = {
      label,
      postP50: percentile(posted, 0.5),
      postP99: percentile(posted, 0.99),
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      max: sorted.at(-1) ?? NaN,
      framesPerSecond: Math.round(samples / (windowMs / 1000)),
      complete: frames === expected,
      rssMb: peakRss,
      serverCpu,
      clientCpu,
      interruptCpu: machine1.interrupts - machine0.interrupts,
      otherCpu:
        machine1.busy -
        machine0.busy -
        (machine1.interrupts - machine0.interrupts) -
        serverCpu.user -
        serverCpu.system -
        clientCpu.user -
        clientCpu.system,
      windowMs,
      frames,
      framesPerWrite: serverFrames / serverWrites,
    };
    const us = (ms: number) => ((ms * 1000) / Math.max(1, frames)).toFixed(1);
    const cores = (ms: number) => (ms / windowMs).toFixed(2);
    console.log(
      `  ${label}: ${options.clients} clients in ${procs} process(es) (connected in ${(connectMs / 1000).toFixed(1)} s), ${total} messages at ${options.rate}/s\n` +
        `    post-to-frame latency p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms ` +
        `(${(result.p99 / 100).toFixed(2)}× the 100 ms target), max ${result.max.toFixed(1)} ms ` +
        `(the POST itself p50 ${result.postP50.toFixed(1)} ms, p99 ${result.postP99.toFixed(1)} ms); ` +
        `${frames} of ${expected} frames, ${result.framesPerSecond} frames/s delivered, ` +
        `${Number.isNaN(result.framesPerWrite) ? "(no write counter in that build)" : `${result.framesPerWrite.toFixed(1)} frames per socket write`}\n` +
        `    CPU over ${(windowMs / 1000).toFixed(1)} s: server user ${cores(serverCpu.user)} + kernel ${cores(serverCpu.system)} cores ` +
        `(${us(serverCpu.user)} + ${us(serverCpu.system)} µs per frame); ` +
        `clients user ${cores(clientCpu.user)} + kernel ${cores(clientCpu.system)} cores ` +
        `(${us(clientCpu.user)} + ${us(clientCpu.system)} µs per frame); ` +
        `interrupts (loopback receive) ${cores(result.interruptCpu)} cores (${us(result.interruptCpu)} µs per frame); ` +
        `everything else ${cores(result.otherCpu)} cores of ${os.cpus().length}\n` +
        `    server RSS peak ${peakRss.toFixed(0)} MB${servers.length > 1 ? " (largest process)" : ""}; ` +
        `targets: p99 < 100 ms ${result.p99 < 100 ? "met" : "MISSED"}, RSS < 500 MB ${peakRss < 500 ? "met" : "MISSED"}; ` +
        `load average ${os.loadavg()[0]!.toFixed(1)}`,
    );
    return result;
  } finally {
    await Promise.all(clientProcesses.map((proc) => proc.close()));
  }
}

export async function runStreamBench(
  options: StreamBenchOptions = { clients: 2000, rate: 200, seconds: 5 },
): Promise<PhaseResult[]> {
  const rounds = options.rounds ?? 1;
  console.log(
    `stream benchmark: ${options.clients} clients, ${options.rate} messages/s for ${options.seconds} s, ` +
      `${rounds} round(s)${options.compare ? `, against ${options.compare}` : ""}, ` +
      `${os.cpus().length} CPUs, Node ${process.version}, load average ${os.loadavg()[0]!.toFixed(1)}`,
  );
  const dirs: string[] = [];
  const dataDir = (name: string) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `parley-stream-bench-${name}-`));
    dirs.push(dir);
    return dir;
  };
  // Every stream client is a stream socket: above the default budget of 1,024 per process, the
  // server is told how many to take (PARLEY_STREAM_MAX_SOCKETS), as an operator would; the
  // clients all come from loopback, and each user has clients/50 of them.
  const quiet = {
    PARLEY_LOG_LEVEL: "error",
    PARLEY_EDITION: "community",
    PARLEY_STREAM_MAX_SOCKETS: String(options.clients + 100),
    PARLEY_STREAM_MAX_SOCKETS_PER_ADDRESS: "0",
    PARLEY_STREAM_MAX_SOCKETS_PER_USER: String(options.clients),
    ...options.serverEnv,
  };
  const nodeArgs = options.cpuProf
    ? { nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${path.resolve(options.cpuProf)}`] }
    : {};
  const variants: Array<{ label: string; cli?: string }> = options.compare
    ? [{ label: "other build", cli: path.resolve(options.compare) }, { label: "this build" }]
    : [{ label: "this build" }];
  const results: PhaseResult[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const variant of variants) {
        const label = `SQLite, one process, ${variant.label}${rounds > 1 ? `, round ${round}` : ""}`;
        const one = await spawnServer({
          env: { ...quiet, PARLEY_DATA_DIR: dataDir("sqlite") },
          ...nodeArgs,
          ...(variant.cli ? { cli: variant.cli } : {}),
        });
        results.push(await runPhase(label, [one], one.adminToken!, options));
        await one.kill();
      }
    }
    if (rounds > 1 || variants.length > 1) {
      console.log(`  medians over ${rounds} round(s):`);
      for (const variant of variants) {
        const mine = results.filter((result) => result.label.includes(variant.label));
        const cpuPerFrame = mine.map(
          (result) => ((result.serverCpu.user + result.serverCpu.system) * 1000) / result.frames,
        );
        console.log(
          `    ${variant.label}: p50 ${median(mine.map((r) => r.p50)).toFixed(1)} ms, ` +
            `p99 ${median(mine.map((r) => r.p99)).toFixed(1)} ms ` +
            `(${(median(mine.map((r) => r.p99)) / 100).toFixed(2)}× target), ` +
            `${median(mine.map((r) => r.framesPerSecond))} frames/s, ` +
            `${median(mine.map((r) => r.framesPerWrite)).toFixed(1)} frames per write, ` +
            `server ${median(cpuPerFrame).toFixed(1)} µs CPU per frame, ` +
            `RSS ${median(mine.map((r) => r.rssMb)).toFixed(0)} MB`,
        );
      }
    }

    if (!TEST_DATABASE_URL) {
      console.log("  (PostgreSQL skipped: set PARLEY_TEST_DATABASE_URL to include it)");
      return results;
    }
    const database = await POSTGRES.open();
    await database.database.close();
    try {
      const env = (name: string) => ({ ...quiet, PARLEY_DATA_DIR: dataDir(name), ...database.env });
      const a = await spawnServer({ env: env("a"), ...nodeArgs });
      const b = await spawnServer({ env: env("b"), ...nodeArgs });
      results.push(await runPhase("PostgreSQL, two processes", [a, b], a.adminToken!, options));
    } finally {
      await killAllServers();
      await database.cleanup();
    }
    return results;
  } finally {
    await killAllServers();
    agent.destroy();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { values } = parseArgs({
    options: {
      clients: { type: "string", default: "2000" },
      rate: { type: "string", default: "200" },
      seconds: { type: "string", default: "5" },
      "client-procs": { type: "string", default: "2" },
      rounds: { type: "string", default: "1" },
      compare: { type: "string" },
      "cpu-prof": { type: "string" },
      "server-env": { type: "string", multiple: true, default: [] },
    },
  });
  await runStreamBench({
    clients: Number(values.clients),
    rate: Number(values.rate),
    seconds: Number(values.seconds),
    clientProcs: Number(values["client-procs"]),
    rounds: Number(values.rounds),
    ...(values.compare ? { compare: values.compare } : {}),
    ...(values["cpu-prof"] ? { cpuProf: values["cpu-prof"] } : {}),
    serverEnv: Object.fromEntries(
      values["server-env"].map((pair) => [
        pair.slice(0, pair.indexOf("=")),
        pair.slice(pair.indexOf("=") + 1),
      ]),
    ),
  });
}
