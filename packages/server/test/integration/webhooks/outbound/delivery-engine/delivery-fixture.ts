import crypto from "node:crypto";
import type { Tracing } from "../../../../../src/tracing/open-telemetry.js";
import type { LookupFunction } from "node:net";
import type { ConfigOverrides } from "../../../../../src/config/load-config.js";
import type { EventDataMap, EventName } from "../../../../../src/events/event-catalogue.js";
import type { ClaimedDelivery } from "../../../../../src/webhooks/outbound/delivery-engine/claim-deliveries.js";
import { createDispatcher } from "../../../../../src/webhooks/outbound/delivery-engine/create-dispatcher.js";
import type { DeliveryLog } from "../../../../../src/webhooks/outbound/delivery-engine/delivery-log.js";
import { createDeliveryMetrics } from "../../../../../src/webhooks/outbound/delivery-engine/delivery-metrics.js";
import type { DeliveryQueue } from "../../../../../src/webhooks/outbound/delivery-engine/delivery-queue.js";
import type { Dispatcher } from "../../../../../src/webhooks/outbound/delivery-engine/dispatcher.js";
import { createTestApp, type TestApp } from "../../../../helpers/build-app.js";
import type { TestDialect } from "../../../../helpers/dialects.js";
import { insertEndpoint } from "../../../../helpers/fixtures.js";
import { FAST_KNOBS } from "../../../../helpers/knobs.js";

export interface Endpoint {
  id: number;
  secret: string;
}

/**
 * The dispatcher's queue as the test sees it: every claim it ran and what it took. A claim is
 * what leads to a send, so "no claim took the row" is the causal form of "nothing was sent", and
 * `claimsDone(2)` is "a whole claim ran after this point". A pass with every send slot taken
 * claims nothing and does not ask the queue; the sweep still looks up the next retry, which
 * `sweepsDone` counts.
 */
export interface WatchedQueue extends DeliveryQueue {
  /** Claims that finished (taking rows or not) since the dispatcher started. */
  readonly claims: number;
  /** Every row a claim took, in order (a retried row appears once per claim). */
  readonly claimed: readonly ClaimedDelivery[];
  /** Claims that failed (the database refused). */
  readonly claimFailures: number;
  /**
   * Resolves once `n` more claims have finished. With n >= 2 the last one started after the
   * call, so it saw every row as it was then.
   */
  claimsDone(n: number): Promise<void>;
  /**
   * Resolves once `n` more passes that look up the next retry have finished: the sweep, the
   * retry timer, a reconnect. With n >= 2 the last one started after the call.
   */
  sweepsDone(n: number): Promise<void>;
}

/** A count that promises can wait on: `after(n)` resolves once it has gone up by n more. */
function counter() {
  const waiters: Array<{ at: number; resolve: () => void }> = [];
  let value = 0;
  return {
    get value() {
      return value;
    },
    bump() {
      value++;
      for (const waiter of waiters.filter((w) => w.at <= value)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    },
    after(n: number): Promise<void> {
      return new Promise((resolve) => waiters.push({ at: value + n, resolve }));
    },
  };
}

function watch(queue: DeliveryQueue): WatchedQueue {
  const claimed: ClaimedDelivery[] = [];
  const claims = counter();
  const sweeps = counter();
  let claimFailures = 0;
  return {
    get claims() {
      return claims.value;
    },
    get claimFailures() {
      return claimFailures;
    },
    claimed,
    async claim(options) {
      try {
        const rows = await queue.claim(options);
        claimed.push(...rows);
        return rows;
      } catch (error) {
        claimFailures++;
        throw error;
      } finally {
        claims.bump();
      }
    },
    record: (attempts, options) => queue.record(attempts, options),
    expireSecrets: (now) => queue.expireSecrets(now),
    recordCircuit: (webhookId, circuit, at) => queue.recordCircuit(webhookId, circuit, at),
    markVerified: (answers) => queue.markVerified(answers),
    async nextDueTime(now) {
      try {
        return await queue.nextDueTime(now);
      } finally {
        sweeps.bump();
      }
    },
    claimsDone: (n) => claims.after(n),
    sweepsDone: (n) => sweeps.after(n),
  };
}

export interface DeliveryApp {
  readonly t: TestApp;
  readonly dispatcher: Dispatcher;
  readonly queue: WatchedQueue;
  /** Registers an endpoint directly in the database (secret sealed as the admin API does). */
  endpoint(
    url: string,
    options?: {
      events?: EventName[];
      enabled?: boolean;
      secret?: string;
      secretCiphertext?: string;
    },
  ): Promise<Endpoint>;
  /** Commits one event through the event spine, as a chat action does. */
  emit<E extends EventName>(event: E, data: EventDataMap[E]): Promise<void>;
  /** Emits ADMIN_USER_DISABLED for `username` (a cheap event with a unique key). */
  emitUser(username: string): Promise<void>;
  delivery(id: number): Promise<DeliveryRow>;
  deliveries(): Promise<DeliveryRow[]>;
  attempts(deliveryId: number): Promise<AttemptRow[]>;
  /** How many claims took delivery `id` so far (each one leads to one send). */
  timesClaimed(id: number): number;
  close(): Promise<void>;
}

export type DeliveryRow = Awaited<ReturnType<typeof selectDeliveries>>[number];
export type AttemptRow = Awaited<ReturnType<typeof selectAttempts>>[number];

function selectDeliveries(t: TestApp) {
  return t.ctx.db.selectFrom("webhook_deliveries").selectAll().orderBy("id").execute();
}
function selectAttempts(t: TestApp, deliveryId: number) {
  return t.ctx.db
    .selectFrom("webhook_attempts")
    .selectAll()
    .where("delivery_id", "=", deliveryId)
    .orderBy("attempt")
    .execute();
}

/**
 * A real app on the given dialect with its delivery engine (dispatcher + metrics on the app's
 * registry, the sender built from the config), fast knobs unless overridden. `start: false`
 * leaves the dispatcher stopped; `leaseMs` replaces the lease made from the time-out.
 */
export async function startDeliveryApp(
  dialect: TestDialect,
  overrides: ConfigOverrides = {},
  options: {
    start?: boolean;
    log?: DeliveryLog;
    lookup?: LookupFunction;
    leaseMs?: number;
    tracing?: Tracing;
  } = {},
): Promise<DeliveryApp> {
  const t = await createTestApp(
    dialect,
    { ...FAST_KNOBS, ...overrides },
    {},
    options.tracing ? { tracing: options.tracing } : {},
  );
  const metrics = createDeliveryMetrics(t.ctx.db, t.app.metrics.registry, t.ctx.now);
  let queue!: WatchedQueue;
  const dispatcher = createDispatcher(t.ctx, metrics, {
    watchQueue: (built) => (queue = watch(built)),
    ...(options.log ? { log: options.log } : {}),
    ...(options.lookup ? { lookup: options.lookup } : {}),
    ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
  });
  if (options.start !== false) dispatcher.start();

  return {
    t,
    dispatcher,
    queue,
    endpoint: (url, opts = {}) => insertEndpoint(t, { url, ...opts }),
    async emit(event, data) {
      await t.ctx.database.transaction((tx) => tx.emit(event, data));
    },
    async emitUser(username) {
      await t.ctx.database.transaction((tx) =>
        tx.emit("ADMIN_USER_DISABLED", { username, adminActor: "admin" }),
      );
    },
    async delivery(id) {
      return t.ctx.db
        .selectFrom("webhook_deliveries")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirstOrThrow();
    },
    deliveries: () => selectDeliveries(t),
    attempts: (deliveryId) => selectAttempts(t, deliveryId),
    timesClaimed: (id) => queue.claimed.filter((row) => row.id === id).length,
    async close() {
      await dispatcher.stop();
      await t.close();
    },
  };
}

/** A log that keeps what it was told, to check that nothing went wrong (or that something did). */
export function recordingLog(): DeliveryLog & {
  lines: Array<{ level: string; message: string; details: object }>;
} {
  const lines: Array<{ level: string; message: string; details: object }> = [];
  const at = (level: string) => (details: object, message: string) => {
    lines.push({ level, message, details });
  };
  return { lines, info: at("info"), warn: at("warn"), error: at("error") };
}

/** The HMAC a receiver computes over the raw body, independently of the server's signer. */
export function expectedSignature(secret: string, body: Buffer): string {
  return `sha256=${crypto.createHmac("sha256", secret).update(body).digest("hex")}`;
}
