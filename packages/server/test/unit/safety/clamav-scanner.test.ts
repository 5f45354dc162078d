import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import type { AddressInfo, Server, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AntivirusUnavailableError } from "../../../src/safety/antivirus/antivirus-unavailable-error.js";
import { createClamAvScanner } from "../../../src/safety/antivirus/clamav-scanner.js";

const EICAR = Buffer.from(
  "X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR" + "-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*",
  "latin1",
);

type Behaviour = "scan" | "close" | "silent" | "error";

interface ClamdRequest {
  command: string;
  chunkSizes: number[];
  bytes: Buffer;
}

interface FakeClamd {
  url: string;
  requests: ClamdRequest[];
}

const servers: Server[] = [];
const openSockets = new Set<Socket>();
afterEach(async () => {
  openSockets.forEach((socket) => socket.destroy());
  await Promise.all(
    servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))),
  );
});

/**
 * A clamd stand-in: reads the NUL-terminated command, then INSTREAM chunks (4-byte big-endian
 * length + data) until the zero-length terminator, and records what arrived.
 */
async function startFakeClamd(behaviour: Behaviour): Promise<FakeClamd> {
  const requests: ClamdRequest[] = [];
  const server = createServer((socket) => {
    openSockets.add(socket);
    socket.on("close", () => openSockets.delete(socket));
    if (behaviour === "close") {
      socket.destroy();
      return;
    }
    let buffer = Buffer.alloc(0);
    let request: ClamdRequest | null = null;
    const chunks: Buffer[] = [];
    socket.on("data", (data) => {
      buffer = Buffer.concat([buffer, data]);
      if (request === null) {
        const end = buffer.indexOf(0);
        if (end === -1) return;
        request = {
          command: buffer.subarray(0, end).toString("latin1"),
          chunkSizes: [],
          bytes: Buffer.alloc(0),
        };
        buffer = buffer.subarray(end + 1);
      }
      while (buffer.length >= 4) {
        const length = buffer.readUInt32BE(0);
        if (buffer.length < 4 + length) return;
        const chunk = buffer.subarray(4, 4 + length);
        buffer = buffer.subarray(4 + length);
        if (length > 0) {
          request.chunkSizes.push(length);
          chunks.push(chunk);
          continue;
        }
        request.bytes = Buffer.concat(chunks);
        requests.push(request);
        if (behaviour === "silent") return;
        if (behaviour === "error") socket.end("INSTREAM size limit exceeded. ERROR\0");
        else if (request.bytes.subarray(0, EICAR.length).equals(EICAR)) {
          socket.end("stream: Eicar-Test-Signature FOUND\0");
        } else socket.end("stream: OK\0");
        return;
      }
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `tcp://127.0.0.1:${port}`, requests };
}

async function scanError(promise: Promise<unknown>): Promise<AntivirusUnavailableError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AntivirusUnavailableError) return error;
    throw error;
  }
  throw new Error("expected the scan to fail");
}

describe("createClamAvScanner", () => {
  it("is named clamav", () => {
    expect(createClamAvScanner({ url: "tcp://127.0.0.1:3310" }).name).toBe("clamav");
  });

  it("reports the signature clamd finds, after streaming the exact bytes", async () => {
    const clamd = await startFakeClamd("scan");
    const scanner = createClamAvScanner({ url: clamd.url });
    await expect(scanner.scan(EICAR)).resolves.toEqual({
      infected: true,
      scanner: "clamav",
      signature: "Eicar-Test-Signature",
    });
    expect(clamd.requests).toHaveLength(1);
    expect(clamd.requests[0]!.command).toBe("zINSTREAM");
    expect(clamd.requests[0]!.bytes.equals(EICAR)).toBe(true);
  });

  it("passes a clean file, split into chunks that reassemble to the same bytes", async () => {
    const clamd = await startFakeClamd("scan");
    const file = randomBytes(200_000);
    await expect(createClamAvScanner({ url: clamd.url }).scan(file)).resolves.toEqual({
      infected: false,
      scanner: "clamav",
    });
    const [request] = clamd.requests;
    expect(request!.chunkSizes.length).toBeGreaterThan(1);
    expect(request!.chunkSizes.reduce((sum, size) => sum + size, 0)).toBe(file.length);
    expect(request!.bytes.equals(file)).toBe(true);
  });

  it("streams an empty file as the terminator alone", async () => {
    const clamd = await startFakeClamd("scan");
    await expect(
      createClamAvScanner({ url: clamd.url }).scan(new Uint8Array()),
    ).resolves.toMatchObject({ infected: false });
    expect(clamd.requests[0]!.chunkSizes).toEqual([]);
  });

  it("fails with antivirus_unavailable when clamd answers ERROR", async () => {
    const clamd = await startFakeClamd("error");
    const error = await scanError(createClamAvScanner({ url: clamd.url }).scan(EICAR));
    expect(error.code).toBe("antivirus_unavailable");
    expect(error.scanner).toBe("clamav");
    expect(error.message).toContain('clamd answered "INSTREAM size limit exceeded. ERROR"');
  });

  it("fails with antivirus_unavailable when clamd closes the connection without a reply", async () => {
    const clamd = await startFakeClamd("close");
    const error = await scanError(createClamAvScanner({ url: clamd.url }).scan(EICAR));
    expect(error.code).toBe("antivirus_unavailable");
  });

  it("fails with antivirus_unavailable when clamd never answers", async () => {
    const clamd = await startFakeClamd("silent");
    const started = Date.now();
    const error = await scanError(
      createClamAvScanner({ url: clamd.url, timeoutMs: 300 }).scan(EICAR),
    );
    expect(error.message).toContain("no verdict within 300 ms");
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(clamd.requests[0]!.bytes.equals(EICAR)).toBe(true);
  });

  it("fails with antivirus_unavailable when nothing listens", async () => {
    const clamd = await startFakeClamd("scan");
    await new Promise((resolve) => servers.pop()!.close(resolve));
    const error = await scanError(createClamAvScanner({ url: clamd.url }).scan(EICAR));
    expect(error.message).toMatch(/cannot talk to clamd: .*ECONNREFUSED/);
    expect(error.cause).toBeInstanceOf(Error);
  });

  it.each(["http://clamav:3310", "clamav:3310", "tcp://"])("rejects the url %s", (url) => {
    expect(() => createClamAvScanner({ url })).toThrow(TypeError);
  });
});
