import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { SendThreadMessage, SendThreadReply } from "./send-thread.js";
import type {
  AttemptOutcome,
  SenderOptions,
  SendRequest,
  WebhookSender,
} from "./webhook-sender.js";

/** The sender's options, less the lookup: a function cannot cross to another thread. */
export type ThreadedSenderOptions = Omit<SenderOptions, "lookup"> & {
  /** Worker threads that send (PARLEY_WEBHOOK_SEND_THREADS), at least 1. */
  threads: number;
  /** Called with each thread as it starts (tests: to count them, or to end one). */
  onThreadStart?: ((worker: Worker) => void) | undefined;
};

const RESTART_DELAY_MS = 1_000;

interface Pending {
  resolve: (outcome: AttemptOutcome) => void;
  startedAt: Date;
  start: number;
}

interface SendThread {
  worker: Worker;
  pending: Map<number, Pending>;
  connections: number;
  tokenRequests: number;
  /** Set once the thread has exited (or was told to close): no more attempts go to it. */
  gone: boolean;
  /** Resolves when the thread has exited. */
  exited: Promise<void>;
  /** Resolves when the thread can send (or has exited). */
  ready: Promise<void>;
  /** Attempts posted in this turn of the event loop: sent to the thread as one message. */
  outbox: { id: number; request: SendRequest }[];
}

/**
 * A WebhookSender whose attempts run on worker threads (`send-thread.ts`), each with its own HTTP
 * sender built from the same options: the HTTP exchange and the response capture leave the main
 * thread, which keeps claiming, deciding what to send (leases, rate caps, fair sharing, circuits)
 * and recording, so SQLite keeps its single writer. Each attempt goes to the thread with the fewest
 * in flight.
 *
 * Threads start with the first attempt (a process that never sends starts none). A thread that
 * dies (an uncaught error, out of memory) fails its attempts in flight with an outcome saying so
 * (they are retried as any failed attempt: sent at least once, never lost) and is replaced by the
 * next attempt. Each thread keeps its own connection pools and OAuth token cache, so an OAuth
 * endpoint may see one token request per thread, and a per-origin connection cap holds per thread.
 */
export function createThreadedWebhookSender(
  options: ThreadedSenderOptions,
): WebhookSender & { ready(): Promise<void> } {
  const { threads: count, onThreadStart, ...senderOptions } = options;
  if (!Number.isInteger(count) || count < 1)
    throw new RangeError(`threads must be a whole number of at least 1, got ${count}`);
  const threads: (SendThread | undefined)[] = Array.from({ length: count }, () => undefined);
  let retiredConnections = 0;
  let retiredTokenRequests = 0;
  let nextId = 1;
  let closed = false;
  // After a thread dies, none is started for a second: a thread that cannot start (a broken
  // install) fails attempts at once instead of being restarted for each of them.
  let restartAfter = 0;
  let lastDeath = "";

  function failed(pending: Pending, error: string): AttemptOutcome {
    return {
      ok: false,
      startedAt: pending.startedAt,
      durationMs: Math.round(performance.now() - pending.start),
      responseStatus: null,
      responseBody: null,
      error,
    };
  }

  function start(): SendThread {
    const worker = startWorker(senderOptions);
    // Idle threads do not keep the process alive; a thread with attempts in flight does.
    worker.unref();
    let onExit!: () => void;
    let onReady!: () => void;
    const thread: SendThread = {
      worker,
      pending: new Map(),
      connections: 0,
      tokenRequests: 0,
      gone: false,
      outbox: [],
      exited: new Promise<void>((resolve) => (onExit = resolve)),
      ready: new Promise<void>((resolve) => (onReady = resolve)),
    };
    let lastError: Error | undefined;
    worker.on("message", (message: SendThreadReply) => {
      if ("ready" in message) return onReady();
      if ("closed" in message) return;
      thread.connections = message.connections;
      thread.tokenRequests = message.tokenRequests;
      for (const reply of message.outcomes) {
        const pending = thread.pending.get(reply.id);
        if (pending === undefined) continue;
        thread.pending.delete(reply.id);
        pending.resolve(reply.outcome);
      }
      if (thread.pending.size === 0) worker.unref();
    });
    worker.on("error", (error) => (lastError = error));
    worker.on("exit", (code) => {
      thread.gone = true;
      retiredConnections += thread.connections;
      retiredTokenRequests += thread.tokenRequests;
      const why =
        lastError === undefined
          ? `the send thread exited (code ${code}) before the attempt ended`
          : `the send thread failed before the attempt ended: ${lastError.message}`;
      if (!closed) {
        restartAfter = performance.now() + RESTART_DELAY_MS;
        lastDeath = why;
      }
      for (const pending of thread.pending.values()) pending.resolve(failed(pending, why));
      thread.pending.clear();
      const slot = threads.indexOf(thread);
      if (slot !== -1) threads[slot] = undefined;
      onReady();
      onExit();
    });
    onThreadStart?.(worker);
    return thread;
  }

  /**
   * The live thread with the fewest attempts in flight, started when its slot is empty; undefined
   * while none runs and a death is too recent to start another.
   */
  function pick(): SendThread | undefined {
    let best: SendThread | undefined;
    for (let i = 0; i < threads.length; i++) {
      let thread = threads[i];
      if (thread === undefined || thread.gone) {
        if (performance.now() < restartAfter) continue;
        thread = start();
        threads[i] = thread;
      }
      if (best === undefined || thread.pending.size < best.pending.size) best = thread;
      if (best.pending.size === 0) break;
    }
    return best;
  }

  function send(request: SendRequest): Promise<AttemptOutcome> {
    const pending: Pending = {
      resolve: () => undefined,
      startedAt: new Date(),
      start: performance.now(),
    };
    if (closed) return Promise.resolve(failed(pending, "sender is closed"));
    const thread = pick();
    if (thread === undefined)
      return Promise.resolve(failed(pending, `no send thread is running (${lastDeath})`));
    const id = nextId++;
    return new Promise<AttemptOutcome>((resolve) => {
      pending.resolve = resolve;
      if (thread.pending.size === 0) thread.worker.ref();
      thread.pending.set(id, pending);
      // One message per thread per turn: the cost of a message is mostly in waking the other
      // side, so the attempts of one claim travel together.
      if (thread.outbox.push({ id, request }) === 1) queueMicrotask(() => flush(thread));
    });
  }

  function flush(thread: SendThread): void {
    const attempts = thread.outbox;
    thread.outbox = [];
    if (!thread.gone) thread.worker.postMessage({ attempts } satisfies SendThreadMessage);
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    // Each thread closes its pools once its attempts in flight have ended (each bounded by the
    // attempt's time-out), answers them, and exits when its port closes.
    await Promise.all(
      threads.map(async (thread) => {
        if (thread === undefined || thread.gone) return;
        thread.worker.ref();
        thread.worker.postMessage({ close: true });
        await thread.exited;
      }),
    );
  }

  /** Starts every thread now rather than at the first attempts; resolves once each can send. */
  async function ready(): Promise<void> {
    if (closed) return;
    await Promise.all(
      threads.map((thread, i) => {
        if (thread === undefined || thread.gone) threads[i] = thread = start();
        return thread.ready;
      }),
    );
  }

  function stats(): { connections: number; tokenRequests: number } {
    let connections = retiredConnections;
    let tokenRequests = retiredTokenRequests;
    for (const thread of threads) {
      if (thread === undefined || thread.gone) continue;
      connections += thread.connections;
      tokenRequests += thread.tokenRequests;
    }
    return { connections, tokenRequests };
  }

  return { send, close, stats, ready };
}

/**
 * How a thread starts: the compiled `send-thread.js` beside this file or, when Parley runs from its
 * TypeScript sources (tests, benchmarks), `send-thread.ts` imported through tsx's API (tsx's
 * `--import` hooks do not reach worker threads on Node 20).
 */
function startWorker(workerData: unknown): Worker {
  const here = import.meta.url;
  if (!here.endsWith(".ts"))
    return new Worker(new URL("./send-thread.js", here), { workerData, name: "parley-send" });
  const entry = new URL("./send-thread.ts", here).href;
  const tsxPackage = createRequire(here).resolve("tsx/package.json");
  const tsxApi = pathToFileURL(path.join(path.dirname(tsxPackage), "dist/esm/api/index.mjs")).href;
  const code = `import(${JSON.stringify(tsxApi)}).then((tsx) => tsx.tsImport(${JSON.stringify(entry)}, ${JSON.stringify(entry)}))`;
  return new Worker(code, { eval: true, workerData, name: "parley-send" });
}
