import path from "node:path";
import type { IncomingMessage, ServerResponse } from "node:http";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import { AjvCompiler } from "@fastify/ajv-compiler";
import helmet, { type HelmetOptions } from "helmet";
import Fastify, {
  type FastifyInstance,
  type FastifyServerOptions,
  type RouteOptions,
} from "fastify";
import type { AppContext } from "./app-context.js";
import { hasAuthGuard } from "./auth/require-role.js";
import { AppError } from "./errors/app-error.js";
import { createMetrics, type Metrics } from "./operations/metrics.js";
import { operationsRoutes } from "./operations/operations-routes.js";
import { answerFrameworkError, problemDetails } from "./plugins/problem-details.js";
import { refuseNul } from "./plugins/refuse-nul.js";
import { usersRoutes } from "./chat/users-routes.js";
import { tokensRoutes } from "./auth/tokens-routes.js";
import { roomsRoutes } from "./chat/rooms-routes.js";
import { messagesRoutes } from "./chat/messages-routes.js";
import { filesRoutes } from "./chat/files-routes.js";
import { moderationRoutes } from "./moderation-queue/moderation-routes.js";
import { webhookDeliveriesRoutes } from "./webhooks/outbound/admin-api/deliveries-routes.js";
import { webhookEndpointsRoutes } from "./webhooks/outbound/admin-api/endpoints-routes.js";
import { inboundWebhooksRoutes } from "./webhooks/inbound/inbound-routes.js";
import { ingestRoutes } from "./webhooks/inbound/ingest-routes.js";
import { adminUiRoutes } from "./http/admin-ui-routes.js";
import { realtimeRoutes } from "./realtime/realtime-routes.js";
import { chatUiRoutes } from "./chat-ui/chat-ui-routes.js";

export interface BuildAppOptions {
  logger?: FastifyServerOptions["logger"];
  /** Sees every route as it is added, with its schema (the bad-input test enumerates them so). */
  onRoute?: (route: RouteOptions) => void;
}

const ajvFactory = AjvCompiler();

/** Largest JSON body of a route that does not set its own `bodyLimit`. */
export const DEFAULT_BODY_LIMIT = 16 * 1024;

/**
 * Request validation. Unknown fields must fail (additionalProperties: false), never be silently
 * dropped. Query strings and path parameters arrive as text, so they are coerced to the schema's
 * types; JSON bodies are not: `{"content": 42}` or `{"enabled": "true"}` is a type error, not a
 * guess.
 */
function buildRequestValidator(externalSchemas: unknown, serverOptions: unknown) {
  const base = { removeAdditional: false, useDefaults: true, allErrors: false } as const;
  const options = (serverOptions ?? {}) as { customOptions?: object; plugins?: unknown[] };
  const build = ajvFactory as unknown as (
    schemas: unknown,
    options: unknown,
  ) => (route: { httpPart?: string }) => unknown;
  const forBody = build(externalSchemas, {
    ...options,
    customOptions: { ...options.customOptions, ...base, coerceTypes: false },
  });
  const forText = build(externalSchemas, {
    ...options,
    customOptions: { ...options.customOptions, ...base, coerceTypes: "array" },
  });
  return (route: { httpPart?: string }) =>
    route.httpPart === "body" ? forBody(route) : refuseNonFinite(forText(route) as Validator);
}

type Validator = ((data: unknown, context?: unknown) => boolean) & {
  errors?: unknown[] | null;
  schemaEnv?: unknown;
};

/**
 * Ajv coerces `?limit=Infinity` (or a 400-digit number) to Infinity and then skips `minimum` and
 * `maximum`, which only look at finite numbers; no query or path value of Parley's is infinite.
 */
function refuseNonFinite(validate: Validator): Validator {
  const checked: Validator = (data, context) => {
    const valid = validate(data, context);
    checked.errors = validate.errors;
    if (!valid || typeof data !== "object" || data === null) return valid;
    for (const [name, value] of Object.entries(data)) {
      const values: unknown[] = Array.isArray(value) ? value : [value];
      if (values.some((one) => typeof one === "number" && !Number.isFinite(one))) {
        checked.errors = [
          {
            keyword: "type",
            instancePath: `/${name}`,
            message: "must be a finite number",
            params: {},
          },
        ];
        return false;
      }
    }
    return true;
  };
  // Fastify passes the parent to Ajv validators (marked by schemaEnv) so defaults can be applied.
  checked.schemaEnv = validate.schemaEnv;
  return checked;
}

/**
 * What the request log shows of a URL. Public URLs carry their credential in the path (ingest
 * tokens), and a misspelled one (`/api/public/Webhooks/ingest/<token>`, `ingest%2F<token>`)
 * carries it just the same: every segment under /api/public/ is hidden, however the path is
 * spelled, encoded or padded.
 */
export function redactUrl(url: string): string {
  const pathPart = url.split(/[?#]/, 1)[0]!;
  let decoded = pathPart;
  try {
    decoded = decodeURIComponent(pathPart);
  } catch {
    // A malformed escape: judge the path as it was sent.
  }
  const normalised = path.posix.normalize(decoded.replace(/\\/g, "/")).toLowerCase();
  return normalised.startsWith("/api/public") ? "/api/public/[redacted]" : url;
}

/**
 * The Fastify app as one function of the context. Every route family is registered here, so this
 * file shows the whole HTTP surface; `server.ts` owns the process around it.
 */
export async function buildApp(
  ctx: AppContext,
  options: BuildAppOptions = {},
): Promise<FastifyInstance & { metrics: Metrics }> {
  const app = Fastify({
    logger: options.logger ?? {
      level: ctx.config.logLevel,
      redact: ["req.headers.authorization"],
      serializers: {
        req: (req: { method: string; url: string; ip?: string }) => ({
          method: req.method,
          url: redactUrl(req.url),
          remoteAddress: req.ip,
        }),
      },
    },
    schemaController: { compilersFactory: { buildValidator: buildRequestValidator as never } },
    // Admin and chat bodies are a few fields; routes that need more say so (messages, ingest,
    // files, each sized to its content limit).
    bodyLimit: DEFAULT_BODY_LIMIT,
    // Slow clients: a request must arrive whole within the request time-out and its headers
    // within the headers time-out, or the connection is dropped. Node checks for overdue requests
    // every connectionsCheckingInterval (30 s by default, which would let a slow client stay twice
    // the time-out): check often enough that the time-outs hold to within a quarter.
    requestTimeout: ctx.config.httpRequestTimeoutMs,
    keepAliveTimeout: ctx.config.httpKeepAliveTimeoutMs,
    http: {
      headersTimeout: ctx.config.httpHeadersTimeoutMs,
      connectionsCheckingInterval: Math.max(
        50,
        Math.min(1_000, Math.floor(ctx.config.httpHeadersTimeoutMs / 4)),
      ),
    },
    frameworkErrors: answerFrameworkError as never,
    return503OnClosing: true,
    forceCloseConnections: "idle",
  });
  // Beyond the cap, new connections are closed at once rather than each taking a socket, memory
  // and a file descriptor until the process runs out.
  app.server.maxConnections = ctx.config.httpMaxConnections;
  const metrics = createMetrics();
  app.decorate("metrics", metrics);

  // JSON only: no text/plain fallback, so a non-JSON body answers 415. An empty body is no body.
  app.removeContentTypeParser("text/plain");
  const jsonParser = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    if (body === "" || (typeof body === "string" && body.trim() === ""))
      return done(null, undefined);
    jsonParser(request, body as string, (error, value) => {
      if (error)
        return done(
          new AppError("invalid_json", `the body is not valid JSON: ${error.message}`),
          undefined,
        );
      done(null, value);
    });
  });

  // Every API route outside /api/public/ authenticates in onRequest, before its body is read: a
  // route registered without the guard there would parse and validate strangers' bodies, so it
  // fails the start instead.
  app.addHook("onRoute", (route) => {
    const url = route.url ?? route.path;
    if (!url.startsWith("/api/") || url.startsWith("/api/public/")) return;
    // The live stream reads no body: its first WebSocket frame carries the token, checked before
    // anything else is accepted (a close with 4401 otherwise; see realtime/stream-gateway.ts).
    if ((route as { websocket?: boolean }).websocket === true) return;
    if (!hasAuthGuard(route.onRequest)) {
      throw new Error(
        `${String(route.method)} ${url} must authenticate in onRequest (onRequest: requireRole(ctx, ...))`,
      );
    }
  });

  if (options.onRoute) app.addHook("onRoute", options.onRoute);
  // A body whose fields are all optional may be left out entirely (POST .../tokens, .../test):
  // Fastify would otherwise validate the missing body against `type: "object"` and answer 400.
  app.addHook("onRoute", (route) => {
    const body = route.schema?.body as { type?: unknown; required?: unknown[] } | undefined;
    if (body && body.type === "object" && !(body.required && body.required.length > 0)) {
      route.schema = { ...route.schema, body: { ...body, type: ["object", "null"] } };
    }
  });

  app.addHook("onResponse", async (request, reply) => {
    metrics.httpDuration
      .labels(request.method, request.routeOptions.url ?? "unmatched", String(reply.statusCode))
      .observe(reply.elapsedTime / 1000);
  });

  // Every answer: nosniff, no framing, no referrer, and a CSP that allows nothing (an API answer
  // is data, never a page). The docs and the admin UI set the policies their pages need.
  const securityHeaders = helmetHeaders({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        formAction: ["'none'"],
      },
    },
    frameguard: { action: "deny" },
    referrerPolicy: { policy: "no-referrer" },
    // Parley does not decide for the operator's proxy whether it is reached over HTTPS only.
    hsts: false,
  });
  app.addHook("onRequest", (_request, reply, done) => {
    reply.headers(securityHeaders);
    done();
  });
  await app.register(problemDetails);
  await app.register(refuseNul);
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Parley API",
        version: "1.0.0",
        description: "Chat, outbound and inbound webhooks.",
      },
      components: {
        securitySchemes: { bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
      },
    },
  });
  await app.register(swaggerUi, {
    routePrefix: "/docs",
    // The UI's own policy (its inline script allowed by hash only), but never framed, and without
    // upgrade-insecure-requests, which would break the docs of a server reached over plain http.
    staticCSP: true,
    transformStaticCSP: (header: string) =>
      header
        .replace("frame-ancestors 'self'", "frame-ancestors 'none'")
        .replace(/\s*upgrade-insecure-requests;?/, ""),
  });
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());

  await app.register(operationsRoutes, { ctx, metrics });
  await app.register(usersRoutes, { ctx });
  await app.register(tokensRoutes, { ctx });
  await app.register(roomsRoutes, { ctx });
  await app.register(messagesRoutes, { ctx });
  await app.register(filesRoutes, { ctx });
  await app.register(moderationRoutes, { ctx });
  await app.register(webhookEndpointsRoutes, { ctx });
  await app.register(webhookDeliveriesRoutes, { ctx });
  await app.register(inboundWebhooksRoutes, { ctx });
  await app.register(ingestRoutes, { ctx });
  await app.register(adminUiRoutes);
  await app.register(realtimeRoutes, { ctx, metrics });
  await app.register(chatUiRoutes);

  return app as unknown as FastifyInstance & { metrics: Metrics };
}

/**
 * The headers helmet sets for `options`, worked out once. They are the same for every answer, and
 * @fastify/helmet built helmet's middleware (parsing the CSP directives) anew for every request:
 * about 5% of an ingest request's CPU time.
 */
function helmetHeaders(options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader(name: string, value: string | number) {
      headers[name.toLowerCase()] = String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  helmet(options)(
    {} as IncomingMessage,
    response as unknown as ServerResponse,
    (error?: unknown) => {
      if (error) throw error;
    },
  );
  return headers;
}
