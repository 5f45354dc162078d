/**
 * A webhook receiver for tests: a real HTTP(S) server on loopback that records every request it
 * gets (headers as sent, raw body bytes, arrival time, which connection carried it) and answers as
 * the test scripts it.
 *
 *   const receiver = await startReceiver();                 // http://127.0.0.1:PORT/hook
 *   receiver.respondWith((req, i) => (i === 0 ? { status: 503 } : { status: 200 }));
 *   ... point a webhook at receiver.url and trigger an event ...
 *   const [first] = await receiver.waitForRequests(1);
 *   await receiver.close();                                 // in afterEach: closes every socket
 *
 * With `{ tls: true }` it serves HTTPS for https://localhost:PORT/hook with a self-signed
 * certificate; trust `receiver.caPem` (the sender's `ca` option, PARLEY_WEBHOOK_CA_FILE).
 * Every request is answered 204 with an empty body until `respondWith` says otherwise. A script
 * can delay its answer (`delayMs`) or drop the connection without answering (`destroy`).
 */
import { once } from "node:events";
import http from "node:http";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { selfSignedCert } from "./tls-cert.js";

export interface RecordedRequest {
  method: string;
  /** Path and query as sent, e.g. "/hook". */
  path: string;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** Names and values exactly as sent, alternating: [name, value, name, value, ...]. */
  rawHeaders: string[];
  body: Buffer;
  /** Date.now() when the whole body had arrived. */
  receivedAt: number;
  /** 1 for the first connection that carried a request, 2 for the next, ...: shows keep-alive. */
  connectionId: number;
}

export interface ScriptedResponse {
  /** Default 204. */
  status?: number;
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** Wait this long before answering (or before dropping the connection). */
  delayMs?: number;
  /** Drop the socket without answering. */
  destroy?: boolean;
}

export type Responder = (
  request: RecordedRequest,
  index: number,
) => ScriptedResponse | Promise<ScriptedResponse>;

export interface ReceiverOptions {
  tls?: boolean;
  host?: "127.0.0.1" | "::1";
}

export interface Receiver {
  /** Where to deliver: `<origin>/hook`. */
  url: string;
  /** Scheme, host and port, e.g. "http://127.0.0.1:40123". */
  origin: string;
  port: number;
  /** Every request so far, in arrival order. */
  requests: RecordedRequest[];
  /** How many distinct connections have carried a request. */
  readonly connectionCount: number;
  /** The PEM to trust for a TLS receiver. */
  caPem?: string;
  /** Script the answers from now on; `index` counts every request since the receiver started. */
  respondWith(responder: Responder): void;
  /** Resolves with the requests once at least `n` have arrived; rejects after `timeoutMs`. */
  waitForRequests(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Stops listening and destroys every open socket, pending answers included. */
  close(): Promise<void>;
}

export async function startReceiver(
  options: ReceiverOptions & { tls: true },
): Promise<Receiver & { caPem: string }>;
export async function startReceiver(options?: ReceiverOptions): Promise<Receiver>;
export async function startReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  const host = options.host ?? "127.0.0.1";
  const requests: RecordedRequest[] = [];
  const waiters = new Set<() => void>();
  const sockets = new Set<Socket>();
  const connectionIds = new WeakMap<object, number>();
  const closing = new AbortController();
  let connectionCount = 0;
  let responder: Responder = () => ({ status: 204 });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);

    let connectionId = connectionIds.get(req.socket);
    if (connectionId === undefined) {
      connectionId = ++connectionCount;
      connectionIds.set(req.socket, connectionId);
    }
    const recorded: RecordedRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: flattenHeaders(req.headers),
      rawHeaders: [...req.rawHeaders],
      body: Buffer.concat(chunks),
      receivedAt: Date.now(),
      connectionId,
    };
    const index = requests.length;
    requests.push(recorded);
    for (const wake of [...waiters]) wake();

    let scripted: ScriptedResponse;
    try {
      scripted = await responder(recorded, index);
    } catch (err) {
      scripted = { status: 500, body: `receiver script failed: ${(err as Error).message}` };
    }
    if (scripted.delayMs !== undefined && scripted.delayMs > 0) {
      try {
        await sleep(scripted.delayMs, undefined, { signal: closing.signal });
      } catch {
        return; // closing: the socket is being destroyed
      }
    }
    if (res.destroyed || req.socket.destroyed) return;
    if (scripted.destroy === true) {
      req.socket.destroy();
      return;
    }
    res.writeHead(scripted.status ?? 204, scripted.headers);
    res.end(scripted.body);
  }

  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    handle(req, res).catch(() => req.socket.destroy());
  };
  let caPem: string | undefined;
  let server: http.Server | https.Server;
  if (options.tls === true) {
    const { key, cert } = selfSignedCert();
    caPem = cert;
    server = https.createServer({ key, cert }, listener);
  } else {
    server = http.createServer(listener);
  }
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  // A test that drops connections on purpose must not crash the process with a TLS alert.
  server.on("tlsClientError", () => undefined);
  server.on("clientError", (_err, socket: Socket) => socket.destroy());

  server.listen(0, host);
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  const hostInUrl =
    options.tls === true && host === "127.0.0.1" ? "localhost" : host === "::1" ? "[::1]" : host;
  const origin = `${options.tls === true ? "https" : "http"}://${hostInUrl}:${port}`;

  return {
    url: `${origin}/hook`,
    origin,
    port,
    requests,
    get connectionCount() {
      return connectionCount;
    },
    ...(caPem === undefined ? {} : { caPem }),
    respondWith(next: Responder) {
      responder = next;
    },
    waitForRequests(n: number, timeoutMs = 10_000): Promise<RecordedRequest[]> {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length < n) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve([...requests]);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `receiver expected ${n} request(s) within ${timeoutMs} ms, got ${requests.length}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async close() {
      closing.abort();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

function flattenHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}
