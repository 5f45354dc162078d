import { HealthStatusSchema } from "@parley/client/wire";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { AppContext } from "../app-context.js";
import { AppError } from "../errors/app-error.js";
import type { Metrics } from "./metrics.js";
import { pingDatabase } from "./readiness-repository.js";

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

  app.get(
    "/readyz",
    {
      schema: {
        tags: ["operations"],
        summary: "The database is reachable",
        response: { 200: HealthStatusSchema },
      },
    },
    async () => {
      try {
        await pingDatabase(ctx.db);
      } catch {
        throw new AppError("service_unavailable", "the database is not reachable");
      }
      return { status: "ready" };
    },
  );

  app.get(
    "/metrics",
    { schema: { tags: ["operations"], summary: "Prometheus metrics", hide: true } },
    async (_request, reply) => {
      reply.type(metrics.registry.contentType);
      return metrics.registry.metrics();
    },
  );
};
