// The stream benchmark's clients, in a process of their own (forked by stream.bench.ts), so that
// reading 400,000 frames/s does not run on the server's event loop or the poster's.
//
// Each client is a plain TCP socket that does the WebSocket handshake (RFC 6455) itself: it sends
// its auth and subscribe frames (masked, as a client must), answers pings, and reads the server's
// frames with a minimal parser. For each MESSAGE_CREATED of the benchmark it takes the message's
// post time from the content ("bench <n> <t0>", t0 on the shared clock below) and records the
// latency at the moment the bytes were read from the socket: no JSON.parse, no per-frame events,
// no allocation per read (one shared read buffer), so the client side costs as little as it can
// and the figure is the frame's arrival at the client.
//
// Protocol with the parent (IPC, advanced serialization):
//   parent → { type: "connect", url, tokens, roomId, count, expected }   → { type: "connected" }
//   parent → { type: "start" }   (CPU accounting starts)
//   parent → { type: "report" }  → { type: "report", latencies, frames, lastArrival, cpu }
//   parent → { type: "close" }   → exits
import { randomBytes } from "node:crypto";
import net, { type Socket } from "node:net";

/**
 * Milliseconds on CLOCK_MONOTONIC, which every process on the machine shares: the poster stamps
 * each message with it, the clients compare against it.
 */
export function sharedClockMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

export type ParentMessage =
  | {
      type: "connect";
      url: string;
      tokens: string[];
      roomId: number;
      count: number;
      /** Frames this process expects in all (messages × its clients): the latency array's size. */
      expected: number;
    }
  | { type: "start" }
  | { type: "report" }
  | { type: "close" };

export interface ClientReport {
  type: "report";
  latencies: Float64Array;
  /** MESSAGE_CREATED frames of the benchmark read. */
  frames: number;
  /** Shared-clock time of the last such frame. */
  lastArrival: number;
  /** process.cpuUsage() since "start", in microseconds. */
  cpu: { user: number; system: number };
}

/** A client frame: FIN + opcode, masked payload (RFC 6455 5.3). */
function clientFrame(opcode: number, payload: Buffer): Buffer {
  const length = payload.length;
  const header = length < 126 ? 2 : 4;
  if (length >= 65_536) throw new Error("client frames stay small");
  const frame = Buffer.allocUnsafe(header + 4 + length);
  frame[0] = 0x80 | opcode;
  if (length < 126) frame[1] = 0x80 | length;
  else {
    frame[1] = 0x80 | 126;
    frame.writeUInt16BE(length, 2);
  }
  const mask = randomBytes(4);
  mask.copy(frame, header);
  for (let i = 0; i < length; i++) frame[header + 4 + i] = payload[i]! ^ mask[i & 3]!;
  return frame;
}

const READY = Buffer.from('"type":"ready"');
const SUBSCRIBED = Buffer.from('"type":"subscribed"');
const MARKER = Buffer.from('"content":"bench ');

interface Sink {
  latencies: Float64Array;
  samples: number;
  frames: number;
  lastArrival: number;
}

/**
 * Every client of the process reads into this one buffer (net's `onread`): a read is handled
 * synchronously, before the next one, so nothing is allocated per read; the few bytes of a frame
 * cut across two reads are copied out.
 */
const READ_BUFFER = Buffer.allocUnsafe(256 * 1024);

/** Opens one client, authenticates and subscribes; resolves once `subscribed` arrived. */
function openClient(
  url: string,
  token: string,
  roomId: number,
  sink: Sink,
  sockets: Socket[],
): Promise<void> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let upgraded = false;
    let subscribed = false;
    let rest: Buffer | undefined;
    const onPayload = (data: Buffer, start: number, end: number, at: number) => {
      if (subscribed) {
        let i = data.indexOf(MARKER, start);
        if (i < 0 || i >= end) return;
        // "bench <n> <t0>": n is not needed, t0 is the post time on the shared clock.
        for (i += MARKER.length; data[i] !== 0x20; i++);
        let t0 = 0;
        let scale = 0;
        for (i++; ; i++) {
          const c = data[i]!;
          if (c >= 48 && c <= 57) {
            t0 = t0 * 10 + c - 48;
            scale *= 10;
          } else if (c === 0x2e) scale = 1;
          else break;
        }
        if (scale > 1) t0 /= scale;
        sink.frames++;
        if (sink.samples < sink.latencies.length) sink.latencies[sink.samples++] = at - t0;
        sink.lastArrival = at;
      } else if (data.subarray(start, end).includes(READY)) {
        socket.write(clientFrame(1, Buffer.from(JSON.stringify({ type: "subscribe", roomId }))));
      } else if (data.subarray(start, end).includes(SUBSCRIBED)) {
        subscribed = true;
        resolve();
      } else if (data.subarray(start, end).includes('"type":"error"')) {
        reject(new Error(data.toString("utf8", start, end)));
      }
    };
    const onRead = (chunk: Buffer) => {
      const at = sharedClockMs();
      const data = rest ? Buffer.concat([rest, chunk]) : chunk;
      rest = undefined;
      let offset = 0;
      if (!upgraded) {
        // The handshake's answer: "HTTP/1.1 101 Switching Protocols", headers, a blank line.
        const endOfHead = data.indexOf("\r\n\r\n");
        if (endOfHead < 0) {
          rest = Buffer.from(data);
          return;
        }
        if (!data.toString("latin1", 0, 12).startsWith("HTTP/1.1 101")) {
          reject(new Error(`no upgrade: ${data.toString("latin1", 0, endOfHead)}`));
          socket.destroy();
          return;
        }
        upgraded = true;
        offset = endOfHead + 4;
        socket.write(clientFrame(1, Buffer.from(JSON.stringify({ type: "auth", token }))));
      }
      for (;;) {
        if (data.length - offset < 2) break;
        const opcode = data[offset]! & 0x0f;
        let length = data[offset + 1]! & 0x7f;
        let header = 2;
        if (length === 126) {
          if (data.length - offset < 4) break;
          length = data.readUInt16BE(offset + 2);
          header = 4;
        } else if (length === 127) {
          if (data.length - offset < 10) break;
          length = Number(data.readBigUInt64BE(offset + 2));
          header = 10;
        }
        if (data.length - offset < header + length) break;
        const start = offset + header;
        const end = start + length;
        if (opcode === 1) onPayload(data, start, end, at);
        else if (opcode === 9) socket.write(clientFrame(10, data.subarray(start, end)));
        else if (opcode === 8) socket.end();
        offset = end;
      }
      if (offset < data.length) rest = Buffer.from(data.subarray(offset));
    };
    const socket = net.connect({
      host: hostname,
      port: Number(port),
      noDelay: true,
      onread: {
        buffer: READ_BUFFER,
        // The buffer given is READ_BUFFER; true: keep reading.
        callback: (size) => {
          onRead(READ_BUFFER.subarray(0, size));
          return true;
        },
      },
    });
    sockets.push(socket);
    socket.once("error", reject);
    socket.once("connect", () =>
      socket.write(
        `GET /api/stream HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: Upgrade\r\n` +
          `Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\n` +
          `Sec-WebSocket-Protocol: parley.v1\r\n\r\n`,
      ),
    );
  });
}

async function main(): Promise<void> {
  const sockets: Socket[] = [];
  const sink: Sink = { latencies: new Float64Array(0), samples: 0, frames: 0, lastArrival: 0 };
  let cpuStart = process.cpuUsage();
  const send = (message: object) => process.send!(message);
  process.on("message", async (message: ParentMessage) => {
    switch (message.type) {
      case "connect": {
        // Connected once per server: the clients already open keep writing into this sink, so it
        // grows rather than being replaced.
        const latencies = new Float64Array(sink.latencies.length + message.expected);
        latencies.set(sink.latencies);
        sink.latencies = latencies;
        const batch = 100;
        for (let start = 0; start < message.count; start += batch) {
          await Promise.all(
            Array.from({ length: Math.min(batch, message.count - start) }, (_, j) =>
              openClient(
                message.url,
                message.tokens[(start + j) % message.tokens.length]!,
                message.roomId,
                sink,
                sockets,
              ),
            ),
          );
        }
        send({ type: "connected" });
        return;
      }
      case "start":
        cpuStart = process.cpuUsage();
        return;
      case "report": {
        const report: ClientReport = {
          type: "report",
          latencies: sink.latencies.slice(0, sink.samples),
          frames: sink.frames,
          lastArrival: sink.lastArrival,
          cpu: process.cpuUsage(cpuStart),
        };
        send(report);
        return;
      }
      case "close":
        for (const socket of sockets) socket.destroy();
        process.disconnect();
        return;
    }
  });
}

// Only when forked as the clients process (the parent imports this module for its types and clock).
if (process.argv.includes("--stream-clients")) await main();
