/**
 * A send thread: the entry of each worker thread of the threaded sender
 * (`threaded-webhook-sender.ts`). It holds its own HTTP sender (connection pools, SSRF-guarded
 * lookup, OAuth token cache, client certificates) built from the options in `workerData`, and runs
 * the attempts the main thread posts to it: the HTTP exchange and the response capture, off the
 * thread that claims, records and serves the API.
 *
 * Messages in: `{ attempts: [{ id, request }] }` (the attempts of one turn of the main thread's
 * loop) and `{ close: true }` (close the pools, then the port). Messages out: `{ outcomes: [{ id,
 * outcome }], connections, tokenRequests }` (the attempts that ended in one turn of this thread's
 * loop), `{ ready: true }` once it can send, and `{ closed: true }`.
 */
import { parentPort, workerData } from "node:worker_threads";
import {
  createWebhookSender,
  type AttemptOutcome,
  type SenderOptions,
  type SendRequest,
} from "./webhook-sender.js";

export type SendThreadMessage =
  { attempts: { id: number; request: SendRequest }[] } | { close: true };

export type SendThreadReply =
  | {
      outcomes: { id: number; outcome: AttemptOutcome }[];
      /** The thread's sender's counts so far (benchmarks, tests). */
      connections: number;
      tokenRequests: number;
    }
  | { closed: true }
  | { ready: true };

const port = parentPort;
if (port === null) throw new Error("send-thread.ts runs as a worker thread only");

const sender = createWebhookSender(workerData as SenderOptions);
port.postMessage({ ready: true } satisfies SendThreadReply);
let ended: { id: number; outcome: AttemptOutcome }[] = [];
const inFlight = new Set<Promise<void>>();

function reply(): void {
  const outcomes = ended;
  ended = [];
  const stats = sender.stats!();
  port!.postMessage({
    outcomes,
    connections: stats.connections,
    tokenRequests: stats.tokenRequests,
  } satisfies SendThreadReply);
}

port.on("message", (message: SendThreadMessage) => {
  if ("close" in message) {
    // The main thread sends nothing after this: answer what is in flight, then close.
    void Promise.all(inFlight)
      .then(() => sender.close())
      .then(() => {
        if (ended.length > 0) reply();
        port.postMessage({ closed: true } satisfies SendThreadReply);
        port.close();
      });
    return;
  }
  for (const { id, request } of message.attempts) {
    const attempt = sender.send(request).then((outcome) => {
      inFlight.delete(attempt);
      if (ended.push({ id, outcome }) === 1) setImmediate(reply);
    });
    inFlight.add(attempt);
  }
});
