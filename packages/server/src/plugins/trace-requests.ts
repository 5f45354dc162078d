import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from "@opentelemetry/api";
import { TraceState } from "@opentelemetry/core";
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { carryTrace, type RequestTrace } from "../tracing/request-trace.js";
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
    /**
     * The request's trace, while something uses traces (trace-gate.ts): the routes that hand it
     * down to the domain (`handsTraceDown`) pass it on; undefined otherwise.
     */
    trace?: RequestTrace;
  }
  interface FastifyContextConfig {
    /**
     * true: the route hands `request.trace` down to the unit of work it starts (the hot write
     * routes), so the trace is not carried in the request's context (request-trace.ts).
     */
    handsTraceDown?: boolean;
  }
}

/** Requests that write nothing an event comes of: their trace is only their span's. */
const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Gives every request a trace (docs/webhooks.md, "Trace context"): a valid `traceparent` that
 * came in is continued, otherwise the request starts a trace. The request's own span (its server
 * span when OpenTelemetry exports, otherwise an id made here) is the parent of the deliveries its
 * events queue: hot write routes hand `request.trace` down; other writes carry it in the request's
 * context for the whole handling of the request (request-trace.ts); reads (GET, HEAD, OPTIONS)
 * queue no deliveries and carry nothing.
 */
export const traceRequests = fp(
  async function traceRequests(
    app: FastifyInstance,
    options: { tracing?: Tracing | undefined; gate: TraceGate },
  ) {
    const tracer = options.tracing?.tracer;
    const gate = options.gate;
    app.addHook("onRequest", (request, reply, done) => {
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
      const requestTrace = { traceParent, traceState: state ?? null };
      request.trace = requestTrace;
      if (request.routeOptions.config?.handsTraceDown || READS.has(request.method)) return done();
      const release = carryTrace(requestTrace, done);
      reply.raw.once("close", release);
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
