import fs from "node:fs";
import type { LookupFunction } from "node:net";
import os from "node:os";
import type { AppContext } from "../../../app-context.js";
import type { Config } from "../../../config/load-config.js";
import { openSecret } from "../../../config/secret-box.js";
import { createThreadedWebhookSender } from "../transport/threaded-webhook-sender.js";
import { createWebhookSender, type WebhookSender } from "../transport/webhook-sender.js";
import { listenForDeliveries } from "./deliveries-listener.js";
import type { DeliveryLog } from "./delivery-log.js";
import type { DeliveryMetrics } from "./delivery-metrics.js";
import { deliveryQueueOn, type DeliveryQueue } from "./delivery-queue.js";
import {
  circuitTimingFor,
  DeliveryDispatcher,
  leaseFor,
  slowAfterFor,
  type Dispatcher,
} from "./dispatcher.js";

export interface DispatcherOptions {
  log?: DeliveryLog;
  /** How long claimed rows stay ours. Default: `leaseFor(webhookTimeoutMs)`. */
  leaseMs?: number;
  /** Default: an HTTP sender built from the config. */
  sender?: WebhookSender;
  /**
   * DNS resolution for the sender built from the config (tests: a name that resolves to a
   * loopback address, to see the SSRF guard refuse it). Default: the system resolver.
   */
  lookup?: LookupFunction;
  /** Wraps the queue verbs built from the config (tests: to watch the claims and sweeps). */
  watchQueue?: (queue: DeliveryQueue) => DeliveryQueue;
}

/**
 * PARLEY_WEBHOOK_SEND_THREADS unset: the machine's cores less one (the main thread's) from 3 cores
 * up. On 2 cores, one on SQLite and none on PostgreSQL; on 1, none. Measured on 2 cores
 * (docs/performance.md, "Send threads"): on SQLite one thread raised the rate sustained at p99
 * under 100 ms from 1,375 to 2,500 deliveries/s; on PostgreSQL it drained 29-32% slower, its
 * backends needing the second core the thread would take.
 */
export function sendThreadsFor(
  config: Pick<Config, "webhookSendThreads" | "databaseUrl">,
  cores = os.availableParallelism(),
): number {
  if (config.webhookSendThreads !== undefined) return config.webhookSendThreads;
  if (cores >= 3) return cores - 1;
  return cores === 2 && config.databaseUrl === undefined ? 1 : 0;
}

/**
 * The HTTP sender of the config: on worker threads (PARLEY_WEBHOOK_SEND_THREADS), or on the main
 * thread when there are none or a test gives a lookup (a function stays on its thread).
 */
export function senderFor(
  config: Config,
  lookup?: LookupFunction,
): WebhookSender & { ready?(): Promise<void> } {
  const options = {
    timeoutMs: config.webhookTimeoutMs,
    allowPrivateNetworks: config.webhookAllowPrivateNetworks,
    allowHttp: config.webhookAllowHttp,
    ...(config.webhookCaFile ? { ca: fs.readFileSync(config.webhookCaFile, "utf8") } : {}),
    proxyUrl: config.webhookProxyUrl,
  };
  const threads = sendThreadsFor(config);
  if (lookup !== undefined || threads === 0) return createWebhookSender({ ...options, lookup });
  return createThreadedWebhookSender({ ...options, threads });
}

const noLog: DeliveryLog = { info() {}, warn() {}, error() {} };

/**
 * Builds this process's dispatcher from the context: its settings from the config, its queries
 * on the app's database, the SSRF-guarded sender (with the extra CA file, when configured), the
 * wake-ups of this process's commits and, on PostgreSQL, a LISTEN connection for the others'.
 *
 * Invariants of its state are checked after every change under test runners (VITEST) or with
 * PARLEY_DEBUG_INVARIANTS=1; in production a broken invariant costs nothing to look for.
 */
export function createDispatcher(
  ctx: AppContext,
  metrics: DeliveryMetrics,
  options: DispatcherOptions = {},
): Dispatcher {
  const { config } = ctx;
  const log = options.log ?? noLog;
  const workerId = ctx.instanceId;
  const pgConfig = ctx.database.pgConfig;
  const queue = deliveryQueueOn(ctx.db, {
    events: ctx.database,
    autoDisable: {
      minFailures: config.webhookAutoDisableMinFailures,
      afterMs: config.webhookAutoDisableAfterMs,
    },
    onDisabled(disabled) {
      for (const endpoint of disabled) {
        metrics.endpointDisabled(endpoint.reason);
        log.warn(
          { webhookId: endpoint.webhookId, reason: endpoint.reason },
          endpoint.reason === "gone"
            ? "webhook endpoint answered 410 Gone and was disabled"
            : "webhook endpoint kept failing and was disabled",
        );
      }
    },
    onRetryAfter: (count) => metrics.attemptsDelayed("retry_after", count),
  });
  return new DeliveryDispatcher({
    settings: {
      workerId,
      leaseMs: options.leaseMs ?? leaseFor(config.webhookTimeoutMs),
      concurrency: config.webhookConcurrency,
      perEndpointLimit: config.webhookPerEndpointConcurrency,
      waitLimit: config.webhookWaitSlots,
      slowAfterMs: slowAfterFor(config.webhookTimeoutMs),
      circuit: circuitTimingFor(config.webhookBackoffBaseMs, config.webhookBackoffMaxMs),
      policy: {
        maxAttempts: config.webhookMaxAttempts,
        backoffBaseMs: config.webhookBackoffBaseMs,
        backoffMaxMs: config.webhookBackoffMaxMs,
      },
      sweepIntervalMs: config.webhookSweepIntervalMs,
    },
    queue: options.watchQueue ? options.watchQueue(queue) : queue,
    sender: options.sender ?? senderFor(config, options.lookup),
    openSecret: (ciphertext) => openSecret(ctx.keys.secretKey, ciphertext),
    onDeliveriesQueued: (listener) => ctx.spine.onDeliveriesQueued(listener),
    ...(pgConfig
      ? {
          listen: (handlers) =>
            listenForDeliveries({
              pgConfig,
              applicationName: `parley-deliveries ${workerId}`,
              ignoreFrom: workerId,
              ...handlers,
              log,
            }),
        }
      : {}),
    metrics,
    log,
    tracer: ctx.tracing?.tracer,
    now: ctx.now,
    checkInvariants: Boolean(process.env.VITEST) || process.env.PARLEY_DEBUG_INVARIANTS === "1",
  });
}
