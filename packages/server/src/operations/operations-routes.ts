import { HealthStatusSchema } from "@parley/client/wire";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { AppContext } from "../app-context.js";
import { AppError } from "../errors/app-error.js";
import type { Metrics } from "./metrics.js";
import { requireMetricsToken } from "./require-metrics-token.js";
import { checkWritable } from "./readiness-repository.js";

/** Health, readiness and Prometheus metrics. */
export const operationsRoutes: FastifyPluginAsyncTypebox<{
  ctx: AppContext;
  metrics: Metrics;
}> = async (app, { ctx, metrics }) => {
  app.get(
    "/healthz",
    {
      schema: {
        tags: ["operations"],
        summary: "The process is up",
        response: { 200: HealthStatusSchema },
      },
    },
    async () => ({
      status: "ok",
    }),
  );

  // The last answer's reason, so the log tells when readiness changes rather than at every probe.
  let notReadyBefore: string | undefined;
  app.get(
    "/readyz",
    {
      schema: {
        tags: ["operations"],
        summary: "The database takes writes",
        description:
          "503 service_unavailable while a small write does not commit within the database time-out (a database that is down, frozen or locked, a full disk), or while the disk holding a SQLite database is nearly full; 200 again, by itself, once it does.",
        response: { 200: HealthStatusSchema },
      },
    },
    async (request) => {
      const notReady = await checkWritable(ctx.db, ctx.now());
      if (notReady) {
        if (notReady.reason !== notReadyBefore)
          request.log.warn({ err: notReady.cause }, `not ready: ${notReady.reason}`);
        notReadyBefore = notReady.reason;
        throw new AppError("service_unavailable", notReady.reason);
      }
      if (notReadyBefore !== undefined) request.log.info("ready again: the database takes writes");
      notReadyBefore = undefined;
      return { status: "ready" };
    },
  );

  // Open unless PARLEY_METRICS_TOKEN is set: then only `Authorization: Bearer <it>` reads it.
  const metricsToken = ctx.config.metricsToken;
  app.get(
    "/metrics",
    {
      ...(metricsToken === undefined ? {} : { onRequest: requireMetricsToken(metricsToken) }),
      schema: { tags: ["operations"], summary: "Prometheus metrics", hide: true },
    },
    async (_request, reply) => {
      reply.type(metrics.registry.contentType);
      return metrics.registry.metrics();
    },
  );
};
