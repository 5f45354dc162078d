import type { Server } from "node:http";
import cookie from "@fastify/cookie";
import Fastify, {
  type FastifyHttpOptions,
  type FastifyInstance,
  type FastifyServerOptions,
  type RouteOptions,
} from "fastify";
import type { AppContext } from "./app-context.js";
import type { AppParts } from "./background-work.js";
import type { Config } from "./config/load-config.js";
import { createMetrics } from "./operations/metrics.js";
import { operationsRoutes } from "./operations/operations-routes.js";
import { httpMetrics } from "./plugins/http-metrics.js";
import { jsonOnly } from "./plugins/json-only.js";
import { openApi } from "./plugins/open-api.js";
import { answerFrameworkError, problemDetails } from "./plugins/problem-details.js";
import { redactedLogger } from "./plugins/redact-url.js";
import { RequestLogController } from "./plugins/request-log-controller.js";
import { logStream } from "./operations/log-stream.js";
import { refuseNul } from "./plugins/refuse-nul.js";
import { requestValidator } from "./plugins/request-validator.js";
import { routeRules } from "./plugins/route-rules.js";
import { securityHeaders } from "./plugins/security-headers.js";
import { traceRequests } from "./plugins/trace-requests.js";
import { usersRoutes } from "./chat/users-routes.js";
import { authRoutes } from "./auth/auth-routes.js";
import { oidcRoutes } from "./auth/oidc-routes.js";
import { tokensRoutes } from "./auth/tokens-routes.js";
import { roomsRoutes } from "./chat/rooms-routes.js";
import { messagesRoutes } from "./chat/messages-routes.js";
import { filesRoutes } from "./chat/files-routes.js";
import { searchRoutes } from "./search/search-routes.js";
import { moderationRoutes } from "./moderation-queue/moderation-routes.js";
import { webhookHealthTrendRoutes } from "./webhooks/outbound/admin-api/health-trend-routes.js";
import { webhookDeliveriesRoutes } from "./webhooks/outbound/admin-api/deliveries-routes.js";
import { webhookResendRoutes } from "./webhooks/outbound/admin-api/resend-routes.js";
import { webhookEndpointsRoutes } from "./webhooks/outbound/admin-api/endpoints-routes.js";
import { inboundWebhooksRoutes } from "./webhooks/inbound/inbound-routes.js";
import { ingestRoutes } from "./webhooks/inbound/ingest-routes.js";
import { adminUiRoutes } from "./http/admin-ui-routes.js";
import { ConnectionBudget } from "./http/connection-budget.js";
import { realtimeRoutes } from "./realtime/realtime-routes.js";
import { createStreamGateway } from "./realtime/stream-gateway.js";
import { chatUiRoutes } from "./chat-ui/chat-ui-routes.js";

export interface BuildAppOptions {
  logger?: FastifyServerOptions["logger"];
  /** Sees every route as it is added, with its schema (the bad-input test enumerates them so). */
  onRoute?: (route: RouteOptions) => void;
}

/**
 * The app, with the parts its process's background work uses (background-work.ts): the metrics
 * registry, and the live-stream gateway, which serves once the bus and presence run.
 */
export type ParleyApp = FastifyInstance & AppParts;

/** Largest JSON body of a route that does not set its own `bodyLimit`. */
export const DEFAULT_BODY_LIMIT = 16 * 1024;

/** Fastify's settings: the request log, validation, body size, time-outs and closing. */
function serverOptions(
  config: Config,
  logger: BuildAppOptions["logger"],
): FastifyHttpOptions<Server> {
  return {
    logger: logger ?? redactedLogger(config.logLevel, logStream(config.logFormat)),
    logController: new RequestLogController(),
    schemaController: requestValidator,
    // Admin and chat bodies are a few fields; routes that need more say so (messages, ingest,
    // files, each sized to its content limit).
    bodyLimit: DEFAULT_BODY_LIMIT,
    // Slow clients: a request must arrive whole within the request time-out and its headers
    // within the headers time-out, or the connection is dropped. Node checks for overdue requests
    // every connectionsCheckingInterval (30 s by default, which would let a slow client stay twice
    // the time-out): check often enough that the time-outs hold to within a quarter.
    requestTimeout: config.httpRequestTimeoutMs,
    keepAliveTimeout: config.httpKeepAliveTimeoutMs,
    http: {
      headersTimeout: config.httpHeadersTimeoutMs,
      connectionsCheckingInterval: Math.max(
        50,
        Math.min(1_000, Math.floor(config.httpHeadersTimeoutMs / 4)),
      ),
    },
    frameworkErrors: answerFrameworkError as never,
    return503OnClosing: true,
    forceCloseConnections: "idle",
  };
}

/**
 * The Fastify app as one function of the context: the rules every request and route obey
 * (src/plugins/), then every route family, so this file shows the whole HTTP surface. `server.ts`
 * owns the process around it.
 */
export async function buildApp(ctx: AppContext, options: BuildAppOptions = {}): Promise<ParleyApp> {
  const app = Fastify(serverOptions(ctx.config, options.logger));
  // Beyond the caps, new connections are closed at once rather than each taking a socket, memory
  // and a file descriptor until the process runs out; the live stream's sockets have a budget of
  // their own, so they never keep requests out.
  const connections = new ConnectionBudget({
    http: ctx.config.httpMaxConnections,
    upgraded: ctx.config.streamMaxSockets,
    upgradedPerAddress: ctx.config.streamMaxSocketsPerAddress,
  });
  connections.install(app.server);
  const metrics = createMetrics();
  const stream = createStreamGateway(ctx, metrics.registry, { log: app.log });
  app.decorate("metrics", metrics);
  app.decorate("stream", stream);

  // First: every later hook and handler runs inside the request's trace.
  await app.register(traceRequests, { tracing: ctx.tracing, gate: ctx.traceGate });
  await app.register(jsonOnly);
  await app.register(routeRules, { onRoute: options.onRoute });
  await app.register(httpMetrics, { metrics });
  await app.register(securityHeaders);
  await app.register(problemDetails);
  await app.register(refuseNul);
  // Parses the session cookie (request.cookies) before any route's authentication reads it.
  await app.register(cookie);
  await app.register(openApi);

  await app.register(operationsRoutes, { ctx, metrics });
  await app.register(authRoutes, { ctx });
  await app.register(oidcRoutes, { ctx });
  await app.register(usersRoutes, { ctx });
  await app.register(tokensRoutes, { ctx });
  await app.register(roomsRoutes, { ctx, stream });
  await app.register(messagesRoutes, { ctx });
  await app.register(filesRoutes, { ctx });
  await app.register(searchRoutes, { ctx });
  await app.register(moderationRoutes, { ctx });
  await app.register(webhookEndpointsRoutes, { ctx });
  await app.register(webhookDeliveriesRoutes, { ctx });
  await app.register(webhookHealthTrendRoutes, { ctx });
  await app.register(webhookResendRoutes, { ctx });
  await app.register(inboundWebhooksRoutes, { ctx });
  await app.register(ingestRoutes, { ctx });
  await app.register(adminUiRoutes);
  await app.register(realtimeRoutes, { ctx, stream, connections });
  await app.register(chatUiRoutes);

  return app as unknown as ParleyApp;
}
