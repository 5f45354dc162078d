import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from "@opentelemetry/api";
import { TraceState } from "@opentelemetry/core";
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { runWithTrace } from "../tracing/request-trace.js";
import type { Tracing } from "../tracing/open-telemetry.js";
import type { TraceGate } from "../tracing/trace-gate.js";
import {
  formatTraceParent,
  newSpanId,
  newTraceId,
  readTraceParent,
  readTraceState,
} from "../tracing/trace-parent.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The request's server span, when OpenTelemetry export is on. */
    otelSpan?: Span;
  }
}

/**
 * Gives every request a trace (docs/webhooks.md, "Trace context"): a valid `traceparent` that
 * came in is continued, otherwise the request starts a trace. The request's own span (its server
 * span when OpenTelemetry exports, otherwise an id made here) is the parent of the deliveries its
 * events queue: the trace is current for the whole handling of the request (request-trace.ts).
 */
export const traceRequests = fp(
  async function traceRequests(
    app: FastifyInstance,
    options: { tracing?: Tracing | undefined; gate: TraceGate },
  ) {
    const tracer = options.tracing?.tracer;
    const gate = options.gate;
    app.addHook("onRequest", (request, _reply, done) => {
      // Nothing uses a trace (no exporter, no endpoint with trace context): no trace is kept.
      if (!gate.carry()) return done();
      const incoming = readTraceParent(request.headers.traceparent);
      const state = incoming ? readTraceState(request.headers.tracestate) : undefined;
      let traceParent: string;
      if (tracer) {
        const parent = incoming
          ? trace.setSpanContext(ROOT_CONTEXT, {
              traceId: incoming.traceId,
              spanId: incoming.spanId,
              traceFlags: Number.parseInt(incoming.flags, 16),
              isRemote: true,
              ...(state ? { traceState: new TraceState(state) } : {}),
            })
          : ROOT_CONTEXT;
        const span = tracer.startSpan(
          request.method,
          {
            kind: SpanKind.SERVER,
            attributes: {
              "http.request.method": request.method,
              "url.path": request.url.split("?")[0],
            },
          },
          parent,
        );
        request.otelSpan = span;
        const context = span.spanContext();
        traceParent = formatTraceParent({
          traceId: context.traceId,
          spanId: context.spanId,
          flags: context.traceFlags.toString(16).padStart(2, "0"),
        });
      } else {
        traceParent = formatTraceParent({
          traceId: incoming?.traceId ?? newTraceId(),
          spanId: newSpanId(),
          // Nothing is recorded here: a trace Parley starts is not sampled unless exported.
          flags: incoming?.flags ?? "00",
        });
      }
      runWithTrace({ traceParent, traceState: state ?? null }, done);
    });
    if (!tracer) return;
    app.addHook("onResponse", async (request, reply) => {
      const span = request.otelSpan;
      if (!span) return;
      const route = request.routeOptions.url;
      if (route) {
        span.updateName(`${request.method} ${route}`);
        span.setAttribute("http.route", route);
      }
      span.setAttribute("http.response.status_code", reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
  },
  { name: "parley-trace-requests" },
);
