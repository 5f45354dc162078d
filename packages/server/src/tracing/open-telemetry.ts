import type { Tracer } from "@opentelemetry/api";

/** Spans exported by OTLP over HTTP, when configured (docs/operations.md, "Tracing"). */
export interface Tracing {
  readonly tracer: Tracer;
  /** Sends the spans still buffered (tests, shutdown). */
  flush(): Promise<void>;
  /** Flushes and stops the exporter. */
  shutdown(): Promise<void>;
}

/** Whether the environment asks for OTLP export (the standard OpenTelemetry variables). */
export function wantsOpenTelemetry(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** Where spans go: the traces endpoint as given, or `/v1/traces` under the general one. */
function tracesEndpoint(env: NodeJS.ProcessEnv): string {
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  return `${env.OTEL_EXPORTER_OTLP_ENDPOINT!.replace(/\/+$/, "")}/v1/traces`;
}

/**
 * Starts the OpenTelemetry JS SDK's tracer with an OTLP/HTTP exporter, when
 * OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set; otherwise nothing is
 * loaded (the SDK's modules are imported here only). The exporter and the sampler read the
 * standard OTEL_* variables themselves (headers, time-out, OTEL_TRACES_SAMPLER...); the service is
 * named by OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES), default "parley". The provider is not
 * registered globally: Parley hands its tracer to the code that makes spans.
 */
export async function startOpenTelemetry(
  env: NodeJS.ProcessEnv = process.env,
): Promise<Tracing | undefined> {
  if (!wantsOpenTelemetry(env)) return undefined;
  const [{ BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, resources] =
    await Promise.all([
      import("@opentelemetry/sdk-trace-base"),
      import("@opentelemetry/exporter-trace-otlp-http"),
      import("@opentelemetry/resources"),
    ]);
  const resource = resources
    .resourceFromAttributes({ "service.name": "parley" })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesEndpoint(env) }))],
  });
  return {
    tracer: provider.getTracer("parley"),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
