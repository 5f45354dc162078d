import type { AppContext } from "./app-context.js";
import type { Metrics } from "./operations/metrics.js";
import type { DeliveryLog } from "./webhooks/outbound/delivery-engine/delivery-log.js";
import { createDeliveryMetrics } from "./webhooks/outbound/delivery-engine/delivery-metrics.js";
import { createDispatcher } from "./webhooks/outbound/delivery-engine/create-dispatcher.js";
import { startRetentionJob } from "./webhooks/outbound/delivery-engine/retention-job.js";

/** A long-running part of the process (the dispatcher, the retention job). */
export interface BackgroundWork {
  readonly name: string;
  /** Stops taking new work and waits for what is in flight. */
  stop(): Promise<void>;
}

/**
 * Starts every background part this process runs. Outbound webhooks are an Enterprise feature:
 * the Community edition queues no deliveries, so it runs neither the dispatcher nor the retention
 * job.
 */
export async function startBackgroundWork(
  ctx: AppContext,
  metrics: Metrics,
  log?: DeliveryLog,
): Promise<BackgroundWork[]> {
  const started: BackgroundWork[] = [];
  if (ctx.config.edition === "enterprise") {
    const dispatcher = createDispatcher(
      ctx,
      createDeliveryMetrics(ctx.db, metrics.registry, ctx.now),
      log ? { log } : {},
    );
    dispatcher.start();
    started.push({ name: "webhook dispatcher", stop: () => dispatcher.stop() });
    const retention = startRetentionJob(ctx, log ? { log } : {});
    started.push({ name: "delivery retention", stop: () => retention.stop() });
  }
  return started;
}
