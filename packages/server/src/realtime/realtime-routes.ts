import websocket from "@fastify/websocket";
import type { FastifyPluginAsync, FastifyRequest, onRequestHookHandler } from "fastify";
import type { AppContext } from "../app-context.js";
import { SESSION_COOKIE } from "../auth/session-cookie.js";
import { AppError } from "../errors/app-error.js";
import type { ConnectionBudget } from "../http/connection-budget.js";
import { callsRoutes } from "./calls-routes.js";
import type { StreamGateway } from "./stream-gateway.js";
import { MAX_CLIENT_FRAME_BYTES, STREAM_PROTOCOL } from "./stream-frames.js";

export interface RealtimeOptions {
  ctx: AppContext;
  /** The app's gateway; it serves once the process's bus and presence run (background-work.ts). */
  stream: StreamGateway;
  /** The process's connection budgets: an upgrade takes a place in the stream's. */
  connections: ConnectionBudget;
}

/** Seconds a refused client is told to wait before it tries again. */
const RETRY_AFTER_SECONDS = "5";

/**
 * The live stream (GET /api/stream) and calls. The sockets are the app's: the gateway closes them
 * (going away) when the app closes, before the bus and presence stop.
 */
export const realtimeRoutes: FastifyPluginAsync<RealtimeOptions> = async (
  app,
  { ctx, stream, connections },
) => {
  await app.register(websocket, {
    options: {
      maxPayload: MAX_CLIENT_FRAME_BYTES,
      handleProtocols: (protocols) => (protocols.has(STREAM_PROTOCOL) ? STREAM_PROTOCOL : false),
    },
    // Sockets are closed by the gateway (going away), which also records the presence leaves.
    preClose: (done) => done(),
  });
  app.addHook("preClose", () => stream.stop());

  // Before the upgrade: a place in the stream's budget, within the client address's share, or an
  // HTTP answer saying why not (nothing is upgraded for a refused client).
  const admit: onRequestHookHandler = async (request) => {
    if (!request.ws) return;
    const refusal = connections.upgrade(request.raw.socket);
    if (refusal === undefined) return;
    stream.recordRefusal(refusal);
    const headers = { "retry-after": RETRY_AFTER_SECONDS };
    if (refusal === "address")
      throw new AppError(
        "rate_limited",
        `too many live-stream sockets from this address (at most ${ctx.config.streamMaxSocketsPerAddress})`,
        { limit: ctx.config.streamMaxSocketsPerAddress },
        headers,
      );
    throw new AppError(
      "service_unavailable",
      "the live stream of this process is full; try again later",
      {},
      headers,
    );
  };

  app.get("/api/stream", { websocket: true, onRequest: admit }, (socket, request) =>
    stream.accept(socket, sameOriginSession(ctx, request)),
  );
  await app.register(callsRoutes, { ctx });
};

/**
 * The session cookie of an upgrade from one of Parley's own pages, which then may authenticate the
 * stream with an empty token. A browser sends cookies with any page's WebSocket to this host, so
 * one from another origin (cross-site WebSocket hijacking) gets no session: it needs a token.
 */
function sameOriginSession(ctx: AppContext, request: FastifyRequest): string | undefined {
  const session = request.cookies?.[SESSION_COOKIE];
  if (!session) return undefined;
  const origin = request.headers.origin;
  const own = [`${request.protocol}://${request.host}`, ctx.config.publicBaseUrl];
  return origin !== undefined && own.includes(origin) ? session : undefined;
}
