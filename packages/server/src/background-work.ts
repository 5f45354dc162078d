import type { AppContext } from "./app-context.js";
import type { Metrics } from "./operations/metrics.js";
import { createRealtimeBus } from "./realtime/create-realtime-bus.js";
import { PresenceTracker } from "./realtime/presence-tracker.js";
import type { StreamGateway } from "./realtime/stream-gateway.js";
import type { DeliveryLog } from "./webhooks/outbound/delivery-engine/delivery-log.js";
import { createDeliveryMetrics } from "./webhooks/outbound/delivery-engine/delivery-metrics.js";
import { createDispatcher } from "./webhooks/outbound/delivery-engine/create-dispatcher.js";
import { startRetentionJob } from "./webhooks/outbound/delivery-engine/retention-job.js";

/** A long-running part of the process (the realtime bus, presence, the dispatcher, retention). */
export interface BackgroundWork {
  readonly name: string;
  /** Stops taking new work and waits for what is in flight. */
  stop(): Promise<void>;
}

/** What background work uses of the HTTP app: its metrics and its live-stream gateway. */
export interface AppParts {
  readonly metrics: Metrics;
  readonly stream: StreamGateway;
}

/**
 * Starts every background part this process runs. Call it before the app listens: the first
 * socket the app accepts then already follows the bus.
 */
export async function startBackgroundWork(
  ctx: AppContext,
  app: AppParts,
  log: DeliveryLog,
): Promise<BackgroundWork[]> {
  return [
    ...(await startRealtimeWork(ctx, app.stream, log)),
    ...startDeliveryWork(ctx, app.metrics, log),
  ];
}

/**
 * The realtime bus (a LISTEN connection on PostgreSQL, and the NOTIFY of every emitting
 * transaction) and presence (its heartbeat and sweep), started before the gateway serves with
 * them. Stopped after the app has closed its sockets: presence then records their leaves.
 */
export async function startRealtimeWork(
  ctx: AppContext,
  stream: StreamGateway,
  log: DeliveryLog,
): Promise<BackgroundWork[]> {
  const bus = createRealtimeBus(ctx, log);
  const presence = new PresenceTracker(ctx, { log });
  await presence.start();
  await stream.start({ bus, presence });
  return [
    {
      name: "realtime bus and presence",
      stop: async () => {
        await bus.close();
        await presence.stop();
      },
    },
  ];
}

/**
 * The webhook dispatcher and the retention job. Outbound webhooks are an Enterprise feature: the
 * Community edition queues no deliveries, so it runs no dispatcher; the retention job runs in
 * both (it also expires inbound idempotency keys).
 */
export function startDeliveryWork(
  ctx: AppContext,
  metrics: Metrics,
  log?: DeliveryLog,
): BackgroundWork[] {
  const started: BackgroundWork[] = [];
  if (ctx.config.edition === "enterprise") {
    const dispatcher = createDispatcher(
      ctx,
      createDeliveryMetrics(ctx.db, metrics.registry, ctx.now),
      log ? { log } : {},
    );
    dispatcher.start();
    started.push({ name: "webhook dispatcher", stop: () => dispatcher.stop() });
  }
  // Every edition: it also expires inbound idempotency keys (the delivery log is empty without
  // Enterprise, so that part finds nothing).
  const retention = startRetentionJob(ctx, log ? { log } : {});
  started.push({ name: "retention", stop: () => retention.stop() });
  return started;
}
