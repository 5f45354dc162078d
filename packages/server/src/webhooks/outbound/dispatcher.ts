import fs from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type { AppContext } from "../../app-context.js";
import { openSecret } from "../../config/secret-box.js";
import { claimDeliveries, type ClaimedDelivery } from "./claim-deliveries.js";
import { listenForDeliveries, type DeliveriesListener } from "./deliveries-listener.js";
import type { DeliveryLog } from "./delivery-log.js";
import type { DeliveryMetrics } from "./delivery-metrics.js";
import { recordAttempts, type FinishedAttempt } from "./record-attempts.js";
import type { RetryPolicy } from "./retry-schedule.js";
import { signPayload } from "./sign-payload.js";
import { createWebhookSender, type AttemptOutcome, type WebhookSender } from "./webhook-sender.js";

export interface DispatcherOptions {
  log?: DeliveryLog;
  /** How long claimed rows stay ours. Default: `leaseFor(webhookTimeoutMs)`. */
  leaseMs?: number;
  /** Default: an HTTP sender built from the config. */
  sender?: WebhookSender;
}

export interface Dispatcher {
  /** Starts claiming: wake-ups, LISTEN (PostgreSQL), retry timer, sweep. */
  start(): void;
  /**
   * Stops claiming, waits for the attempts in flight to be sent and recorded, then closes the
   * sender and the LISTEN connection. Nothing is released: a row claimed but not finished keeps
   * its lease until it runs out, and is then retaken (by this or another process).
   */
  stop(): Promise<void>;
  /** Asks for a claim pass (deliveries were queued). Cheap; calls coalesce. */
  wake(): void;
  /** Resolves when nothing is in flight, being recorded or about to be claimed (tests). */
  idle(): Promise<void>;
}

/**
 * The lease on a claimed delivery: always longer than one attempt can take (the sender aborts at
 * the time-out), with room for recording it, a slow database and clock skew between hosts, so a
 * slow but live attempt is never sent twice in parallel. 30 s time-out -> 65 s lease.
 */
export function leaseFor(timeoutMs: number): number {
  return timeoutMs * 2 + 5_000;
}

const noLog: DeliveryLog = { info() {}, warn() {}, error() {} };

/** A claimed delivery waiting for its attempt to be recorded. */
interface Finished {
  row: ClaimedDelivery;
  attempt: FinishedAttempt;
}

/**
 * The delivery engine of one process: claims due deliveries under a lease, sends them concurrently
 * (at most `webhookConcurrency` at once, at most `webhookPerEndpointConcurrency` to one endpoint),
 * and records each attempt with its state transition.
 *
 * It claims when woken: by a local commit that queued deliveries, by a NOTIFY from another process
 * (PostgreSQL), by the retry timer (set to the earliest next attempt it knows of), by the sweep
 * (every `webhookSweepIntervalMs`: never-attempted rows, due retries, expired leases), and when a
 * slot frees up while due rows were left behind. A database error never ends the loop: it is
 * logged and the pass is retried with back-off, so a database restart heals by itself.
 */
export function createDispatcher(
  ctx: AppContext,
  metrics: DeliveryMetrics,
  options: DispatcherOptions = {},
): Dispatcher {
  const { config } = ctx;
  const log = options.log ?? noLog;
  const workerId = ctx.instanceId;
  const leaseMs = options.leaseMs ?? leaseFor(config.webhookTimeoutMs);
  const concurrency = config.webhookConcurrency;
  const perEndpointLimit = config.webhookPerEndpointConcurrency;
  const policy: RetryPolicy = {
    maxAttempts: config.webhookMaxAttempts,
    backoffBaseMs: config.webhookBackoffBaseMs,
    backoffMaxMs: config.webhookBackoffMaxMs,
  };
  const sender =
    options.sender ??
    createWebhookSender({
      timeoutMs: config.webhookTimeoutMs,
      allowPrivateNetworks: config.webhookAllowPrivateNetworks,
      ...(config.webhookCaFile ? { ca: fs.readFileSync(config.webhookCaFile, "utf8") } : {}),
    });

  /** Deliveries being sent: what the concurrency caps count. */
  let sending = 0;
  const sendingByEndpoint = new Map<number, number>();
  /** Every delivery claimed and not yet recorded (sent or being sent), by id. */
  const unrecorded = new Set<number>();
  const toRecord: Finished[] = [];
  const idleWaiters: Array<() => void> = [];
  const secrets = new Map<string, string>();

  let started = false;
  let stopping = false;
  let stopped: Promise<void> | undefined;
  let passScheduled = false;
  let passRunning = false;
  let passWanted = false;
  /** Look up the next due time in the database after this pass (sweep, timer, reconnect). */
  let refreshWanted = false;
  /** The last claim may have left due rows behind: claim again when a slot frees up. */
  let backlog = false;
  let recording = false;
  let flushScheduled = false;
  let passFailures = 0;
  let retryTimer: { at: number; handle: NodeJS.Timeout } | undefined;
  let errorTimer: NodeJS.Timeout | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  let listener: DeliveriesListener | undefined;

  function wake(refresh = false): void {
    if (!started || stopping) return;
    passWanted = true;
    if (refresh) refreshWanted = true;
    if (passRunning || passScheduled) return;
    passScheduled = true;
    // setImmediate coalesces a burst of wake-ups (one per committed event) into one pass.
    setImmediate(runPass);
  }

  async function runPass(): Promise<void> {
    passScheduled = false;
    if (stopping) return settle();
    passRunning = true;
    try {
      while (passWanted && !stopping) {
        passWanted = false;
        await claim();
        if (refreshWanted) {
          refreshWanted = false;
          await refreshRetryTimer();
        }
      }
      if (passFailures > 0) log.info({}, "webhook dispatcher reached the database again");
      passFailures = 0;
    } catch (error) {
      passFailures++;
      if (passFailures === 1 || passFailures % 20 === 0) {
        log.warn(
          { err: (error as Error).message, failures: passFailures },
          "webhook dispatcher could not claim deliveries; retrying",
        );
      }
      const delay = Math.min(100 * 2 ** passFailures, 5_000);
      clearTimeout(errorTimer);
      errorTimer = setTimeout(() => wake(true), delay);
    } finally {
      passRunning = false;
      settle();
    }
  }

  async function claim(): Promise<void> {
    // Send slots, and backpressure: when recording falls behind (a slow database), stop taking
    // work rather than pile up finished attempts in memory.
    const free = Math.min(concurrency - sending, 2 * concurrency - unrecorded.size);
    if (free <= 0) {
      backlog = true;
      return;
    }
    const rows = await claimDeliveries(ctx.db, {
      limit: free,
      leaseMs,
      workerId,
      now: ctx.now(),
      perEndpointLimit,
      inFlightByEndpoint: sendingByEndpoint,
    });
    // A row not yet recorded here is one whose lease ran out while its result waited to be
    // recorded (database down): the claim renewed our lease; it must not be sent twice.
    for (const row of rows) if (!unrecorded.has(row.id) && !stopping) launch(row);
    // Rows taken may mean more are due (or were locked by another worker a moment ago), and an
    // endpoint at its cap has more waiting: claim again when a send finishes. Only an empty claim
    // with no endpoint at its cap means this worker has caught up.
    backlog = rows.length > 0 || [...sendingByEndpoint.values()].some((n) => n >= perEndpointLimit);
  }

  async function refreshRetryTimer(): Promise<void> {
    const now = ctx.now();
    const next = await ctx.db
      .selectFrom("webhook_deliveries")
      .select((eb) => eb.fn.min("next_attempt_at").as("at"))
      .where("next_attempt_at", ">", now)
      .executeTakeFirst();
    if (next?.at != null) armRetryTimer(Number(next.at));
  }

  /** Wakes the dispatcher when the earliest known retry is due (one timer, the earliest wins). */
  function armRetryTimer(at: number): void {
    if (stopping || (retryTimer && retryTimer.at <= at)) return;
    if (retryTimer) clearTimeout(retryTimer.handle);
    const delay = Math.min(Math.max(0, at - ctx.now()), 2 ** 31 - 1);
    retryTimer = {
      at,
      handle: setTimeout(() => {
        retryTimer = undefined;
        // After this pass, look up the next retry: later ones were not kept by this timer.
        wake(true);
      }, delay),
    };
  }

  function launch(row: ClaimedDelivery): void {
    unrecorded.add(row.id);
    sending++;
    sendingByEndpoint.set(row.webhook_id, (sendingByEndpoint.get(row.webhook_id) ?? 0) + 1);
    void attempt(row).then((outcome) => {
      metrics.attempt(outcome);
      // The send slot is free as soon as the answer is in; the row stays leased to us (and in
      // `unrecorded`) until its attempt is recorded, so nobody sends it again meanwhile.
      sending--;
      const left = (sendingByEndpoint.get(row.webhook_id) ?? 1) - 1;
      if (left > 0) sendingByEndpoint.set(row.webhook_id, left);
      else sendingByEndpoint.delete(row.webhook_id);
      toRecord.push({ row, attempt: { deliveryId: row.id, attempt: row.attempts + 1, outcome } });
      scheduleFlush();
      if (backlog) wake();
    });
  }

  async function attempt(row: ClaimedDelivery): Promise<AttemptOutcome> {
    let secret: string;
    try {
      secret = secretOf(row.secret_ciphertext);
    } catch {
      return {
        ok: false,
        startedAt: new Date(),
        durationMs: 0,
        responseStatus: null,
        responseBody: null,
        error: "the endpoint secret cannot be decrypted (was PARLEY_SECRET_KEY changed?)",
      };
    }
    const body = Buffer.from(row.body, "utf8");
    return sender.send({ url: row.url, body, signature: signPayload(secret, body) });
  }

  function secretOf(ciphertext: string): string {
    let secret = secrets.get(ciphertext);
    if (secret === undefined) {
      secret = openSecret(ctx.keys.secretKey, ciphertext);
      if (secrets.size >= 1_000) secrets.clear();
      secrets.set(ciphertext, secret);
    }
    return secret;
  }

  /**
   * Records finished attempts in batches (group commit): every answer that arrived in the same
   * turn of the event loop, or while the previous batch was being written, goes into one
   * transaction. better-sqlite3 is synchronous, so without the deferral each answer would be
   * written alone (measured: one transaction per attempt, a third of the burst rate).
   */
  function scheduleFlush(): void {
    if (flushScheduled || recording) return;
    flushScheduled = true;
    setImmediate(() => {
      flushScheduled = false;
      void flushRecords();
    });
  }

  async function flushRecords(): Promise<void> {
    if (recording) return;
    recording = true;
    let failures = 0;
    try {
      while (toRecord.length > 0) {
        const batch = toRecord.splice(0, 100);
        try {
          const transitions = await recordAttempts(
            ctx.db,
            batch.map((item) => item.attempt),
            { workerId, policy, now: ctx.now() },
          );
          for (const transition of transitions) {
            if (!transition.recorded) continue;
            if (transition.status === "FAILED") armRetryTimer(transition.nextAttemptAt!);
            else if (transition.status !== "PENDING") metrics.finished(transition.status);
          }
          failures = 0;
        } catch (error) {
          failures++;
          if (!stopping || failures < 5) {
            if (failures === 1 || failures % 20 === 0) {
              log.warn(
                { err: (error as Error).message, attempts: batch.length, failures },
                "webhook dispatcher could not record attempts; retrying",
              );
            }
            toRecord.unshift(...batch);
            await sleep(Math.min(100 * 2 ** failures, 5_000));
            continue;
          }
          // Shutting down with the database unreachable: the leases run out and the deliveries
          // are attempted again (at-least-once), by this process after a restart or another one.
          log.error(
            { err: (error as Error).message, attempts: batch.length },
            "webhook dispatcher gave up recording attempts at shutdown; they will be retried",
          );
        }
        for (const { row } of batch) unrecorded.delete(row.id);
      }
    } finally {
      recording = false;
    }
    if (backlog) wake();
    settle();
  }

  function isIdle(): boolean {
    return !passScheduled && !passRunning && unrecorded.size === 0 && !flushScheduled && !recording;
  }

  function settle(): void {
    if (isIdle()) for (const resolve of idleWaiters.splice(0)) resolve();
  }

  return {
    start() {
      if (started) return;
      started = true;
      unsubscribe = ctx.spine.onDeliveriesQueued(() => wake());
      if (ctx.dialect === "postgres" && ctx.database.pgConfig) {
        listener = listenForDeliveries({
          pgConfig: ctx.database.pgConfig,
          applicationName: `parley-deliveries ${workerId}`,
          onNotify: () => wake(),
          onListening: () => wake(true),
          log,
        });
      }
      sweepTimer = setInterval(() => wake(true), config.webhookSweepIntervalMs);
      wake(true);
    },
    wake: () => wake(),
    idle() {
      return isIdle() ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve));
    },
    stop() {
      stopped ??= (async () => {
        stopping = true;
        unsubscribe?.();
        clearInterval(sweepTimer);
        clearTimeout(errorTimer);
        if (retryTimer) clearTimeout(retryTimer.handle);
        await listener?.close();
        await new Promise<void>((resolve) => {
          idleWaiters.push(resolve);
          settle();
        });
        await sender.close();
      })();
      return stopped;
    },
  };
}
