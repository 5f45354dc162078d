import websocket from "@fastify/websocket";
import type { FastifyPluginAsync } from "fastify";
import type { AppContext } from "../app-context.js";
import { callsRoutes } from "./calls-routes.js";
import type { StreamGateway } from "./stream-gateway.js";
import { STREAM_PROTOCOL } from "./stream-frames.js";

export interface RealtimeOptions {
  ctx: AppContext;
  /** The app's gateway; it serves once the process's bus and presence run (background-work.ts). */
  stream: StreamGateway;
}

/**
 * The live stream (GET /api/stream) and calls. The sockets are the app's: the gateway closes them
 * (going away) when the app closes, before the bus and presence stop.
 */
export const realtimeRoutes: FastifyPluginAsync<RealtimeOptions> = async (app, { ctx, stream }) => {
  await app.register(websocket, {
    options: {
      maxPayload: 64 * 1024,
      handleProtocols: (protocols) => (protocols.has(STREAM_PROTOCOL) ? STREAM_PROTOCOL : false),
    },
    // Sockets are closed by the gateway (going away), which also records the presence leaves.
    preClose: (done) => done(),
  });
  app.addHook("preClose", () => stream.stop());

  app.get("/api/stream", { websocket: true }, (socket) => stream.accept(socket));
  await app.register(callsRoutes, { ctx });
};
