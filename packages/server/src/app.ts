import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import { AjvCompiler } from "@fastify/ajv-compiler";
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import type { AppContext } from "./app-context.js";
import { AppError } from "./errors/app-error.js";
import { createMetrics, type Metrics } from "./operations/metrics.js";
import { operationsRoutes } from "./operations/operations-routes.js";
import { problemDetails } from "./plugins/problem-details.js";
import { usersRoutes } from "./chat/users-routes.js";
import { roomsRoutes } from "./chat/rooms-routes.js";
import { messagesRoutes } from "./chat/messages-routes.js";
import { filesRoutes } from "./chat/files-routes.js";
import { moderationRoutes } from "./moderation/moderation-routes.js";
import { webhookDeliveriesRoutes } from "./webhooks/outbound/deliveries-routes.js";
import { webhookEndpointsRoutes } from "./webhooks/outbound/endpoints-routes.js";
import { inboundWebhooksRoutes } from "./webhooks/inbound/inbound-routes.js";
import { ingestRoutes } from "./webhooks/inbound/ingest-routes.js";
import { adminUiRoutes } from "./admin-ui/admin-ui-routes.js";

export interface BuildAppOptions {
  logger?: FastifyServerOptions["logger"];
}

const ajvFactory = AjvCompiler();

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
    route.httpPart === "body" ? forBody(route) : forText(route);
}

/** Ingest URLs carry their credential in the path: logs show `/ingest/[token]` instead. */
export function redactUrl(url: string): string {
  return url.replace(/(\/webhooks\/ingest\/)[^/?#]+/, "$1[token]");
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
    return503OnClosing: true,
    forceCloseConnections: "idle",
  });
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

  await app.register(problemDetails);
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
  await app.register(swaggerUi, { routePrefix: "/docs" });
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());

  await app.register(operationsRoutes, { ctx, metrics });
  await app.register(usersRoutes, { ctx });
  await app.register(roomsRoutes, { ctx });
  await app.register(messagesRoutes, { ctx });
  await app.register(filesRoutes, { ctx });
  await app.register(moderationRoutes, { ctx });
  await app.register(webhookEndpointsRoutes, { ctx });
  await app.register(webhookDeliveriesRoutes, { ctx });
  await app.register(inboundWebhooksRoutes, { ctx });
  await app.register(ingestRoutes, { ctx });
  await app.register(adminUiRoutes);

  return app as unknown as FastifyInstance & { metrics: Metrics };
}
