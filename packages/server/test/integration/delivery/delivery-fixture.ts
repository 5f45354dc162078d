import crypto from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { ConfigOverrides } from "../../../src/config/load-config.js";
import { sealSecret } from "../../../src/config/secret-box.js";
import type { EventDataMap, EventName } from "../../../src/events/event-catalogue.js";
import { inTransaction } from "../../../src/events/in-transaction.js";
import type { DeliveryLog } from "../../../src/webhooks/outbound/delivery-log.js";
import { createDeliveryMetrics } from "../../../src/webhooks/outbound/delivery-metrics.js";
import { createDispatcher, type Dispatcher } from "../../../src/webhooks/outbound/dispatcher.js";
import { createTestApp, type TestApp } from "../../helpers/build-app.js";
import type { TestDialect } from "../../helpers/dialects.js";

/** Knobs that run the whole state machine in a couple of seconds. */
export const FAST_KNOBS: ConfigOverrides = {
  webhookTimeoutMs: 1_000,
  webhookBackoffBaseMs: 100,
  webhookBackoffMaxMs: 1_000,
  webhookSweepIntervalMs: 300,
  webhookConcurrency: 16,
  webhookPerEndpointConcurrency: 8,
};

export interface Endpoint {
  id: number;
  secret: string;
}

export interface DeliveryApp {
  readonly t: TestApp;
  readonly dispatcher: Dispatcher;
  /** Registers an endpoint directly in the database (secret sealed as the admin API does). */
  endpoint(
    url: string,
    options?: { events?: EventName[]; enabled?: boolean; secret?: string },
  ): Promise<Endpoint>;
  /** Commits one event through the event spine, as a chat action does. */
  emit<E extends EventName>(event: E, data: EventDataMap[E]): Promise<void>;
  /** Emits ADMIN_USER_DISABLED for `username` (a cheap event with a unique key). */
  emitUser(username: string): Promise<void>;
  delivery(id: number): Promise<DeliveryRow>;
  deliveries(): Promise<DeliveryRow[]>;
  attempts(deliveryId: number): Promise<AttemptRow[]>;
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
 * registry), fast knobs unless overridden. `start: false` leaves the dispatcher stopped.
 */
export async function startDeliveryApp(
  dialect: TestDialect,
  overrides: ConfigOverrides = {},
  options: { start?: boolean; log?: DeliveryLog } = {},
): Promise<DeliveryApp> {
  const t = await createTestApp(dialect, { ...FAST_KNOBS, ...overrides });
  const metrics = createDeliveryMetrics(t.ctx.db, t.app.metrics.registry, t.ctx.now);
  const dispatcher = createDispatcher(t.ctx, metrics, options.log ? { log: options.log } : {});
  if (options.start !== false) dispatcher.start();

  return {
    t,
    dispatcher,
    async endpoint(url, opts = {}) {
      const secret = opts.secret ?? `whsec_${crypto.randomBytes(12).toString("hex")}`;
      const now = Date.now();
      const row = await t.ctx.db
        .insertInto("webhooks")
        .values({
          name: "test endpoint",
          url,
          secret_ciphertext: sealSecret(t.ctx.keys.secretKey, secret),
          events: JSON.stringify(opts.events ?? ["ADMIN_USER_DISABLED"]),
          enabled: opts.enabled === false ? 0 : 1,
          created_at: now,
          updated_at: now,
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      return { id: row.id, secret };
    },
    async emit(event, data) {
      await inTransaction(t.ctx, (tx) => tx.emit(event, data));
    },
    async emitUser(username) {
      await inTransaction(t.ctx, (tx) =>
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
    async close() {
      await dispatcher.stop();
      await t.close();
    },
  };
}

/** Polls `check` until it returns a truthy value; fails with `what` after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
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
