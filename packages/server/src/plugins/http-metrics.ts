import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import type { Metrics } from "../operations/metrics.js";

export interface HttpMetricsOptions {
  metrics: Metrics;
}

/** Each answer's duration on /metrics, by method, route pattern and status. */
export const httpMetrics = fp(async function httpMetrics(
  app: FastifyInstance,
  { metrics }: HttpMetricsOptions,
) {
  app.addHook("onResponse", async (request, reply) => {
    metrics.httpDuration
      .labels(request.method, request.routeOptions.url ?? "unmatched", String(reply.statusCode))
      .observe(reply.elapsedTime / 1000);
  });
});
