/**
 * A flood of the live stream against a real `parley serve` process: one user opens 2,000 stream
 * sockets, and one socket sends 1,000,000 frames, while another user calls the API. The flooding
 * user keeps PARLEY_STREAM_MAX_SOCKETS_PER_USER sockets and is refused the rest (429 before the
 * upgrade past the address's share, 4429 past the user's); the flooding socket is closed with
 * 1008 after its burst; the other user's requests stay fast (p99 under 200 ms) and the server's
 * resident memory stays under 300 MB. Before the limits, the sockets took every connection of the
 * process and the API stopped answering; the frames were queued without bound (490 MB per
 * million).
 */
import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { apiFor } from "../helpers/fixtures.js";
import { killAllServers, spawnServer, type SpawnedServer } from "../helpers/spawn-server.js";
import { openAuthenticated } from "../helpers/stream-socket.js";

const SOCKETS = 2_000;
const FRAMES = 1_000_000;
/** The defaults (config-schema.ts). */
const PER_USER = 20;
const BURST = 200;

const dirs: string[] = [];
const cleanups: Array<() => void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  await killAllServers();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A user of `server`, made through its admin API; resolves with a token of theirs. */
async function createUser(server: SpawnedServer, username: string): Promise<string> {
  const admin = apiFor({ url: server.url, token: server.adminToken! });
  const { data: user } = await admin("POST /api/admin/users", { username, role: "user" });
  const { data: issued } = await admin("POST /api/admin/users/{id}/tokens", { id: user.id });
  return issued.token;
}

/** A client text frame (masked, as every client frame must be). */
function clientFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const header = payload.length < 126 ? 2 : 4;
  const frame = Buffer.alloc(header + 4 + payload.length);
  frame[0] = 0x81;
  if (payload.length < 126) frame[1] = 0x80 | payload.length;
  else {
    frame[1] = 0x80 | 126;
    frame.writeUInt16BE(payload.length, 2);
  }
  const mask = crypto.randomBytes(4);
  mask.copy(frame, header);
  for (let i = 0; i < payload.length; i++) frame[header + 4 + i] = payload[i]! ^ mask[i % 4]!;
  return frame;
}

interface FloodResult {
  /** The close code the server sent, if it sent a close frame. */
  closeCode: number | undefined;
  /** `pong` frames received: the frames the server handled. */
  pongs: number;
  /** Bytes of frames this client managed to write before the server stopped it. */
  written: number;
}

/**
 * One authenticated stream socket on a raw TCP connection (the upgrade done by hand) that writes
 * `frames` ping frames as fast as the connection takes them, and reads what the server answers.
 */
function flood(server: SpawnedServer, token: string, frames: number): Promise<FloodResult> {
  const { hostname, port } = new URL(server.url);
  const socket = net.connect({ host: hostname, port: Number(port) });
  cleanups.push(() => socket.destroy());
  const result: FloodResult = { closeCode: undefined, pongs: 0, written: 0 };
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    let upgraded = false;
    socket.on("error", () => {});
    socket.on("close", () => resolve(result));
    socket.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (!upgraded) {
        const end = buffered.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buffered.subarray(0, end).toString();
        if (!head.startsWith("HTTP/1.1 101")) {
          reject(new Error(`the upgrade was refused: ${head}`));
          return;
        }
        upgraded = true;
        buffered = buffered.subarray(end + 4);
        void send();
      }
      // Server frames: unmasked, text pongs and a close.
      for (;;) {
        if (buffered.length < 2) return;
        const opcode = buffered[0]! & 0x0f;
        let length = buffered[1]! & 0x7f;
        let offset = 2;
        if (length === 126) {
          if (buffered.length < 4) return;
          length = buffered.readUInt16BE(2);
          offset = 4;
        } else if (length === 127) {
          if (buffered.length < 10) return;
          length = Number(buffered.readBigUInt64BE(2));
          offset = 10;
        }
        if (buffered.length < offset + length) return;
        const payload = buffered.subarray(offset, offset + length);
        if (opcode === 0x8) result.closeCode = payload.readUInt16BE(0);
        else if (opcode === 0x1 && payload.toString().includes('"pong"')) result.pongs++;
        buffered = buffered.subarray(offset + length);
      }
    });
    socket.write(
      `GET /api/stream HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\n` +
        `Connection: Upgrade\r\nSec-WebSocket-Key: ${crypto.randomBytes(16).toString("base64")}\r\n` +
        "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: parley.v1\r\n\r\n",
    );
    const send = async () => {
      socket.write(clientFrame(JSON.stringify({ type: "auth", token })));
      // 10,000 frames per write; each waits for the connection to take the previous one.
      const ping = clientFrame(JSON.stringify({ type: "ping" }));
      const block = Buffer.concat(Array.from({ length: 10_000 }, () => ping));
      for (let sent = 0; sent < frames && !socket.destroyed; sent += 10_000) {
        result.written += block.length;
        if (!socket.write(block))
          await new Promise<void>((done) => {
            socket.once("drain", done);
            socket.once("close", done);
          });
      }
    };
  });
}

type Outcome = "ready" | `closed ${number}` | `http ${number}` | "error";

/** One stream socket of `token`: whether it got `ready`, or how it was refused. Ready ones stay. */
function attempt(server: SpawnedServer, token: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${server.url.replace(/^http/, "ws")}/api/stream`, "parley.v1");
    cleanups.push(() => ws.terminate());
    ws.once("open", () => ws.send(JSON.stringify({ type: "auth", token })));
    ws.once("message", () => resolve("ready"));
    ws.once("close", (code) => resolve(`closed ${code}`));
    ws.once("unexpected-response", (_request, response) => {
      resolve(`http ${response.statusCode ?? 0}`);
      ws.terminate();
    });
    ws.once("error", () => resolve("error"));
  });
}

/**
 * Times GET `url` with `token`, one request after the other, in a worker thread, until `stop()`,
 * which gives the latencies in ms (each request must answer 200).
 */
function timeRequests(url: string, token: string) {
  const worker = new Worker(
    `
    const { parentPort, workerData } = require("node:worker_threads");
    let running = true;
    const latencies = [];
    parentPort.on("message", () => (running = false));
    (async () => {
      while (running) {
        const started = performance.now();
        const res = await fetch(workerData.url, { headers: { authorization: "Bearer " + workerData.token } });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error("GET answered " + res.status);
        latencies.push(performance.now() - started);
        if (latencies.length === 1) parentPort.postMessage("started");
      }
      parentPort.postMessage(latencies);
    })();
    `,
    { eval: true, workerData: { url, token } },
  );
  cleanups.push(() => void worker.terminate());
  const messages: unknown[] = [];
  const waiters: Array<() => void> = [];
  let failure: Error | undefined;
  worker.on("message", (message) => {
    messages.push(message);
    for (const wake of waiters.splice(0)) wake();
  });
  worker.on("error", (error) => {
    failure = error;
    for (const wake of waiters.splice(0)) wake();
  });
  const nth = async (n: number) => {
    while (messages.length < n && !failure) await new Promise<void>((wake) => waiters.push(wake));
    if (failure) throw failure;
    return messages[n - 1];
  };
  return {
    started: nth(1),
    async stop(): Promise<number[]> {
      worker.postMessage("stop");
      const latencies = (await nth(2)) as number[];
      await worker.terminate();
      return latencies;
    },
  };
}

/** The peak resident memory of a process so far (Linux: VmHWM), in bytes. */
function peakRss(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)![1]) * 1024;
}

describe("a flood of the live stream", () => {
  it("leaves another user's requests fast and the server small: 2,000 sockets of one user, 1,000,000 frames of one socket", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-flood-"));
    dirs.push(dataDir);
    const server = await spawnServer({
      env: { PARLEY_DATA_DIR: dataDir, PARLEY_EDITION: "community" },
    });
    const mallory = await createUser(server, "mallory");
    const flooder = await createUser(server, "flooder");
    const alice = await createUser(server, "alice");
    await apiFor({ url: server.url, token: alice })("POST /api/rooms", { name: "general" });

    // Alice's requests, one after the other, all through the flood, from a thread of their own
    // (the flood's clients keep this one busy).
    const requests = timeRequests(`${server.url}/api/rooms`, alice);
    await requests.started;

    const frames = flood(server, flooder, FRAMES);
    const outcomes: Outcome[] = [];
    for (let opened = 0; opened < SOCKETS; opened += 100)
      outcomes.push(
        ...(await Promise.all(Array.from({ length: 100 }, () => attempt(server, mallory)))),
      );
    const flooded = await frames;
    const latencies = await requests.stop();

    // The flooding socket: closed after its burst, nearly all of its frames never read.
    expect(flooded.closeCode).toBe(1008);
    expect(flooded.pongs).toBeLessThanOrEqual(BURST);
    expect(flooded.written).toBeLessThan(FRAMES * 21);
    // The flooding user: its own share of sockets, the rest refused with a reason.
    const counts: Record<string, number> = {};
    for (const outcome of outcomes) counts[outcome] = (counts[outcome] ?? 0) + 1;
    expect(counts.ready).toBe(PER_USER);
    expect(Object.keys(counts).sort()).toEqual(
      ["ready", "http 429", "closed 4429"].filter((key) => counts[key]).sort(),
    );
    expect((counts["http 429"] ?? 0) + (counts["closed 4429"] ?? 0)).toBe(SOCKETS - PER_USER);

    // Alice's requests stayed fast, the server small, and her stream still opens.
    latencies.sort((x, y) => x - y);
    const p99 = latencies[Math.floor(latencies.length * 0.99)]!;
    const rss = peakRss(server.pid);
    console.log(
      `stream flood: ${JSON.stringify(counts)}; flooding socket ${JSON.stringify(flooded)}; ` +
        `${latencies.length} requests, p99 ${p99.toFixed(1)} ms; peak RSS ${(rss / 2 ** 20).toFixed(0)} MiB`,
    );
    expect(latencies.length).toBeGreaterThan(20);
    expect(p99, `p99 of ${latencies.length} requests`).toBeLessThan(200);
    expect(rss).toBeLessThan(300 * 1024 * 1024);
    const stream = await openAuthenticated(server.url, alice);
    await stream.close();
  }, 60_000);
});
