import websocket from "@fastify/websocket";
import type { FastifyPluginAsync } from "fastify";
import type { AppContext } from "../app-context.js";
import type { Metrics } from "../operations/metrics.js";
import { callsRoutes } from "./calls-routes.js";
import { createLocalBus } from "./local-bus.js";
import { createPostgresBus } from "./postgres-bus.js";
import { PresenceTracker } from "./presence-tracker.js";
import { StreamGateway } from "./stream-gateway.js";
import { STREAM_PROTOCOL } from "./stream-frames.js";
import { createStreamMetrics } from "./stream-metrics.js";

export interface RealtimeOptions {
  ctx: AppContext;
  metrics: Metrics;
  /** Unread bytes a stream client may have before it is dropped (tests make it small). */
  maxBufferedBytes?: number;
}

/**
 * The live stream (GET /api/stream), presence and calls: one plugin owning their lifetime. The bus,
 * the presence heartbeat and the gateway start when the app is ready and stop when it closes
 * (sockets first, then presence, which records the leaves before the database closes).
 */
export const realtimeRoutes: FastifyPluginAsync<RealtimeOptions> = async (app, options) => {
  const { ctx } = options;
  const log = app.log;
  const bus =
    ctx.dialect === "postgres" && ctx.database.pgConfig
      ? createPostgresBus({ db: ctx.db, spine: ctx.spine, pgConfig: ctx.database.pgConfig, log })
      : createLocalBus(ctx.spine);
  const presence = new PresenceTracker(ctx, { log });
  // The gauges read the gateway at scrape time; it needs the counters, so it comes second.
  const holder: { gateway?: StreamGateway } = {};
  const metrics = createStreamMetrics(options.metrics.registry, {
    connections: () => holder.gateway?.connectionCount ?? 0,
    subscriptions: () => holder.gateway?.subscriptionCount ?? 0,
    bufferedBytes: () => holder.gateway?.bufferedBytes() ?? 0,
  });
  const started = new StreamGateway(ctx, {
    bus,
    presence,
    metrics,
    log,
    ...(options.maxBufferedBytes ? { maxBufferedBytes: options.maxBufferedBytes } : {}),
  });
  holder.gateway = started;

  await app.register(websocket, {
    options: {
      maxPayload: 64 * 1024,
      handleProtocols: (protocols) => (protocols.has(STREAM_PROTOCOL) ? STREAM_PROTOCOL : false),
    },
    // Sockets are closed by the gateway (going away), which also records the presence leaves.
    preClose: (done) => done(),
  });

  app.addHook("onReady", async () => {
    await presence.start();
    await started.start();
  });
  app.addHook("preClose", async () => {
    await started.stop();
    await presence.stop();
  });

  app.get("/api/stream", { websocket: true }, (socket) => started.accept(socket));
  await app.register(callsRoutes, { ctx });
};
