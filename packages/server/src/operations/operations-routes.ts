import { sql } from "kysely";
import type { FastifyPluginAsync } from "fastify";
import type { AppContext } from "../app-context.js";
import { AppError } from "../errors/app-error.js";
import type { Metrics } from "./metrics.js";

/** Health, readiness and Prometheus metrics. */
export const operationsRoutes: FastifyPluginAsync<{ ctx: AppContext; metrics: Metrics }> = async (
  app,
  { ctx, metrics },
) => {
  const status = {
    type: "object",
    properties: { status: { type: "string" } },
    required: ["status"],
  } as const;

  app.get(
    "/healthz",
    { schema: { tags: ["operations"], summary: "The process is up", response: { 200: status } } },
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
        response: { 200: status },
      },
    },
    async () => {
      try {
        await sql`select 1`.execute(ctx.db);
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
