// The live stream under load: 2,000 WebSocket clients subscribed to one room, 200 messages/s
// posted through the API, and for every (message, client) pair the time from just before the POST
// to the frame's arrival. Also the server's peak RSS. First one `parley serve` on SQLite; then, when
// PARLEY_TEST_DATABASE_URL is set, two processes on one PostgreSQL database (clients split between
// them, posts alternating). Servers are child processes (the built CLI) on loopback; the clients
// and the poster share this process. Targets: p99 under 100 ms, RSS under 500 MB.
//
// Run: npx tsx packages/server/bench/stream.bench.ts [--clients 2000] [--rate 200] [--seconds 5]
// (also part of `npm run bench -w @parley/server`, through bench/run-all.ts; needs the build)
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { POSTGRES, TEST_DATABASE_URL } from "../test/helpers/dialects.js";
import { killAllServers, spawnServer, type SpawnedServer } from "../test/helpers/spawn-server.js";

export interface StreamBenchOptions {
  clients: number;
  rate: number;
  seconds: number;
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

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

async function connectAll(
  servers: SpawnedServer[],
  tokens: string[],
  roomId: number,
  count: number,
  onFrame: (data: Buffer, at: number) => void,
): Promise<WebSocket[]> {
  const sockets: WebSocket[] = [];
  const batch = 100;
  for (let start = 0; start < count; start += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, count - start) }, (_, j) => {
        const i = start + j;
        const server = servers[i % servers.length]!;
        return new Promise<void>((resolve, reject) => {
          const ws = new WebSocket(`${server.url.replace("http", "ws")}/api/stream`, "parley.v1", {
            skipUTF8Validation: true,
            perMessageDeflate: false,
          });
          sockets.push(ws);
          ws.once("error", reject);
          ws.once("open", () =>
            ws.send(JSON.stringify({ type: "auth", token: tokens[i % tokens.length] })),
          );
          ws.on("message", (data: Buffer) => {
            const at = performance.now();
            // Cheap check first: only room frames carry "subscribed"/"MESSAGE_CREATED".
            if (data.includes('"type":"ready"'))
              ws.send(JSON.stringify({ type: "subscribe", roomId }));
            else if (data.includes('"type":"subscribed"')) resolve();
            else onFrame(data, at);
          });
        });
      }),
    );
  }
  return sockets;
}

async function runPhase(
  label: string,
  servers: SpawnedServer[],
  adminToken: string,
  options: StreamBenchOptions,
): Promise<void> {
  const a = servers[0]!;
  // 50 users, each with clients/50 connections (a user's tabs), all members of one room.
  const users: Array<{ token: string }> = [];
  for (let i = 0; i < 50; i++) {
    const user = await call<{ id: number }>(a.url, adminToken, "POST", "/api/admin/users", {
      username: `bench-${label.replace(/\W/g, "").toLowerCase()}-${i}`,
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
  const sentAt = new Float64Array(total).fill(NaN);
  const latencies = new Float64Array(total * options.clients);
  let samples = 0;
  let frames = 0;
  const marker = Buffer.from('"content":"bench ');
  // The client side shares the machine with the servers: find the sequence number in the bytes
  // instead of decoding and parsing each of the millions of frames.
  const onFrame = (data: Buffer, at: number) => {
    let i = data.indexOf(marker);
    if (i < 0) return;
    frames++;
    let n = 0;
    for (i += marker.length; data[i]! >= 48 && data[i]! <= 57; i++) n = n * 10 + data[i]! - 48;
    const t0 = sentAt[n]!;
    if (!Number.isNaN(t0) && samples < latencies.length) latencies[samples++] = at - t0;
    lastArrival = at;
  };
  let lastArrival = 0;
  const connectStart = performance.now();
  const sockets = await connectAll(
    servers,
    users.map((user) => user.token),
    room.id,
    options.clients,
    onFrame,
  );
  const connectMs = performance.now() - connectStart;
  let peakRss = Math.max(...servers.map((server) => rssMb(server.pid)));
  const rssTimer = setInterval(() => {
    for (const server of servers) peakRss = Math.max(peakRss, rssMb(server.pid));
  }, 100);

  // The poster: `rate` messages per second, spread over the servers, paced by the clock.
  const started = performance.now();
  let sent = 0;
  const posts: Array<Promise<unknown>> = [];
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(
        total,
        Math.floor(((performance.now() - started) / 1000) * options.rate),
      );
      while (sent < due) {
        const i = sent++;
        const server = servers[i % servers.length]!;
        sentAt[i] = performance.now();
        posts.push(
          call(
            server.url,
            users[i % users.length]!.token,
            "POST",
            `/api/rooms/${room.id}/messages`,
            {
              content: `bench ${i}`,
            },
          ),
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
  while (samples < expected && performance.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  clearInterval(rssTimer);
  const sorted = latencies.subarray(0, samples).sort();
  const p50 = percentile(sorted, 0.5);
  const p99 = percentile(sorted, 0.99);
  console.log(
    `  ${label}: ${options.clients} clients (connected in ${(connectMs / 1000).toFixed(1)} s), ${total} messages at ${options.rate}/s\n` +
      `    post-to-frame latency p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${sorted.at(-1)?.toFixed(1)} ms; ` +
      `${samples} of ${expected} frames (${frames} seen), ` +
      `${Math.round(samples / ((lastArrival - started) / 1000))} frames/s delivered\n` +
      `    server RSS peak ${peakRss.toFixed(0)} MB${servers.length > 1 ? " (largest process)" : ""}; ` +
      `targets: p99 < 100 ms ${p99 < 100 ? "met" : "MISSED"}, RSS < 500 MB ${peakRss < 500 ? "met" : "MISSED"}; ` +
      `load average ${os.loadavg()[0]!.toFixed(1)} (other work on the machine skews every figure)`,
  );
  for (const ws of sockets) ws.terminate();
}

export async function runStreamBench(
  options: StreamBenchOptions = { clients: 2000, rate: 200, seconds: 5 },
): Promise<void> {
  console.log(
    `stream benchmark: ${options.clients} clients, ${options.rate} messages/s for ${options.seconds} s, ${os.cpus().length} CPUs, Node ${process.version}`,
  );
  const dirs: string[] = [];
  const dataDir = (name: string) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `parley-stream-bench-${name}-`));
    dirs.push(dir);
    return dir;
  };
  // Every stream client is an open connection: above the default cap of 1,024 per process, the
  // server is told how many to take (PARLEY_HTTP_MAX_CONNECTIONS), as an operator would.
  const quiet = {
    PARLEY_LOG_LEVEL: "error",
    PARLEY_EDITION: "community",
    PARLEY_HTTP_MAX_CONNECTIONS: String(options.clients + 100),
  };
  try {
    const one = await spawnServer({ env: { ...quiet, PARLEY_DATA_DIR: dataDir("sqlite") } });
    await runPhase("SQLite, one process", [one], one.adminToken!, options);
    await one.kill();

    if (!TEST_DATABASE_URL) {
      console.log("  (PostgreSQL skipped: set PARLEY_TEST_DATABASE_URL to include it)");
      return;
    }
    const database = await POSTGRES.open();
    await database.database.close();
    try {
      const env = (name: string) => ({ ...quiet, PARLEY_DATA_DIR: dataDir(name), ...database.env });
      const a = await spawnServer({ env: env("a") });
      const b = await spawnServer({ env: env("b") });
      await runPhase("PostgreSQL, two processes", [a, b], a.adminToken!, options);
    } finally {
      await killAllServers();
      await database.cleanup();
    }
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
    },
  });
  await runStreamBench({
    clients: Number(values.clients),
    rate: Number(values.rate),
    seconds: Number(values.seconds),
  });
}
