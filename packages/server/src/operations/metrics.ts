import client from "prom-client";

/**
 * One Prometheus registry per app (tests run several apps in one process). Features add their own
 * instruments to `registry`; `/metrics` serves it.
 */
export interface Metrics {
  readonly registry: client.Registry;
  readonly httpDuration: client.Histogram<"method" | "route" | "status">;
}

export function createMetrics(): Metrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: "parley_" });
  const httpDuration = new client.Histogram({
    name: "parley_http_request_duration_seconds",
    help: "HTTP request duration by method, route and status",
    labelNames: ["method", "route", "status"] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return { registry, httpDuration };
}
