import { connect } from "node:net";
import type { NetConnectOpts, Socket } from "node:net";
import type { AntivirusScanner, ScanVerdict } from "./antivirus-scanner.js";
import { AntivirusUnavailableError } from "./antivirus-unavailable-error.js";

const NAME = "clamav";
const DEFAULT_PORT = 3310;
const DEFAULT_TIMEOUT_MS = 30_000;
// clamd reads the stream in chunks of any size up to StreamMaxLength; 64 KiB keeps memory flat.
const CHUNK_BYTES = 64 * 1024;
// The "z" prefix makes clamd terminate its reply with NUL instead of a newline.
const INSTREAM_COMMAND = Buffer.from("zINSTREAM\0", "latin1");
const END_OF_STREAM = Buffer.alloc(4);

function parseClamdUrl(url: string): NetConnectOpts {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`ClamAV url "${url}" is not a URL (expected tcp://host:3310)`);
  }
  if (parsed.protocol === "tcp:" && parsed.hostname !== "") {
    const port = parsed.port === "" ? DEFAULT_PORT : Number(parsed.port);
    return { host: parsed.hostname.replace(/^\[(.*)\]$/, "$1"), port };
  }
  if (parsed.protocol === "unix:" && parsed.pathname !== "") return { path: parsed.pathname };
  throw new TypeError(`ClamAV url "${url}" must be tcp://host:port or unix:///path/to/clamd.sock`);
}

function parseReply(reply: string): ScanVerdict {
  if (reply === "stream: OK") return { infected: false, scanner: NAME };
  const found = /^stream: (.+) FOUND$/.exec(reply);
  if (found) return { infected: true, scanner: NAME, signature: found[1]! };
  throw new AntivirusUnavailableError(
    NAME,
    reply.endsWith("ERROR") ? `clamd answered "${reply}"` : `unexpected clamd reply "${reply}"`,
  );
}

function write(socket: Socket, data: Uint8Array): Promise<void> {
  return new Promise((resolve) => {
    if (socket.write(data)) resolve();
    else socket.once("drain", resolve);
  });
}

async function sendStream(socket: Socket, bytes: Uint8Array): Promise<void> {
  await write(socket, INSTREAM_COMMAND);
  for (let offset = 0; offset < bytes.length && !socket.destroyed; offset += CHUNK_BYTES) {
    const chunk = bytes.subarray(offset, offset + CHUNK_BYTES);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(chunk.length);
    await write(socket, header);
    await write(socket, chunk);
  }
  if (!socket.destroyed) await write(socket, END_OF_STREAM);
}

function scanWithClamd(
  target: NetConnectOpts,
  bytes: Uint8Array,
  timeoutMs: number,
): Promise<ScanVerdict> {
  return new Promise((resolve, reject) => {
    const received: Buffer[] = [];
    let settled = false;
    const socket = connect(target);

    const settle = (outcome: () => ScanVerdict) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      try {
        resolve(outcome());
      } catch (error) {
        reject(error);
      }
    };
    const unavailable = (reason: string, cause?: unknown) => () => {
      throw new AntivirusUnavailableError(NAME, reason, cause === undefined ? {} : { cause });
    };
    const replyText = () => Buffer.concat(received).toString("utf8").split("\0")[0]!.trim();

    const timer = setTimeout(
      () => settle(unavailable(`no verdict within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.on("connect", () => {
      sendStream(socket, bytes).catch((error: unknown) =>
        settle(unavailable(`sending the file failed: ${(error as Error).message}`, error)),
      );
    });
    socket.on("data", (data) => {
      received.push(data);
      if (data.includes(0)) settle(() => parseReply(replyText()));
    });
    socket.on("end", () => {
      const reply = replyText();
      settle(
        reply === ""
          ? unavailable("clamd closed the connection without a reply")
          : () => parseReply(reply),
      );
    });
    // clamd may close right after an error reply (e.g. a stream over its size limit), which can
    // surface here as EPIPE/ECONNRESET; a reply already received still wins.
    socket.on("error", (error) => {
      const reply = replyText();
      settle(
        reply === ""
          ? unavailable(`cannot talk to clamd: ${error.message}`, error)
          : () => parseReply(reply),
      );
    });
  });
}

/**
 * A scanner backed by clamd, streaming the file with the INSTREAM command. Every failure to get a
 * verdict (connection, time-out, an ERROR reply) rejects with AntivirusUnavailableError.
 */
export function createClamAvScanner(options: {
  url: string;
  timeoutMs?: number;
}): AntivirusScanner {
  const target = parseClamdUrl(options.url);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError(`ClamAV timeoutMs must be a positive number, got ${timeoutMs}`);
  }
  return { name: NAME, scan: (bytes) => scanWithClamd(target, bytes, timeoutMs) };
}
