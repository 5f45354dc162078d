import crypto from "node:crypto";
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
  type Tracer,
} from "@opentelemetry/api";
import { TraceState } from "@opentelemetry/core";
import { formatTraceParent, newSpanId, readTraceParent, type TraceParent } from "./trace-parent.js";

/** What a delivery attempt's span and traceparent are made from. */
export interface AttemptTrace {
  deliveryId: number;
  webhookId: number;
  eventId: string;
  event: string;
  /** This attempt's number (1 for the first). */
  attempt: number;
  url: string;
  /** The trace of the request that caused the event, as the delivery row keeps it. */
  traceParent: string | null;
  traceState: string | null;
}

/** One attempt's place in its event's trace: its `traceparent`, and its span when exported. */
export interface DeliverSpan {
  traceParent: string;
  traceState: string | null;
  /** Ends the span (a no-op without OpenTelemetry). */
  end(status: number | null, error: string | null): void;
}

/**
 * The trace an event belongs to: the one its request carried, or (for an event with no request
 * behind it: a background job, a row queued before traces were kept) one derived from its event
 * id, trace and parent span alike, so every attempt and redelivery of one event still shares a
 * trace id (its parent, the event, is then a span nobody recorded).
 */
function eventTrace(attempt: AttemptTrace): TraceParent {
  const parent = readTraceParent(attempt.traceParent ?? undefined);
  if (parent) return parent;
  const digest = crypto.hash("sha256", attempt.eventId, "hex");
  return { traceId: digest.slice(0, 32), spanId: digest.slice(32, 48), flags: "00" };
}

/** `url.full` without its query: a query may hold a token. */
function urlWithoutQuery(url: string): string {
  const at = url.search(/[?#]/);
  return at === -1 ? url : url.slice(0, at);
}

/**
 * Starts the span of one attempt, `webhook.deliver` (a client span, child of the request's span),
 * when a tracer is given; its id is the span id of the attempt's `traceparent`. Without a tracer
 * the attempt gets a span id of its own, in the same trace.
 */
export function startDeliverSpan(tracer: Tracer | undefined, attempt: AttemptTrace): DeliverSpan {
  const parent = eventTrace(attempt);
  if (!tracer) {
    return {
      traceParent: formatTraceParent({ ...parent, spanId: newSpanId() }),
      traceState: attempt.traceState,
      end: () => undefined,
    };
  }
  const context = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: parent.traceId,
    spanId: parent.spanId,
    // An event without a request: sampled by the exporter's own rule, as a new trace would be.
    traceFlags: attempt.traceParent === null ? 1 : Number.parseInt(parent.flags, 16),
    isRemote: true,
    ...(attempt.traceState ? { traceState: new TraceState(attempt.traceState) } : {}),
  });
  const span: Span = tracer.startSpan(
    "webhook.deliver",
    {
      kind: SpanKind.CLIENT,
      attributes: {
        "parley.webhook.id": attempt.webhookId,
        "parley.event.id": attempt.eventId,
        "parley.event.type": attempt.event,
        "parley.delivery.id": attempt.deliveryId,
        "parley.delivery.attempt": attempt.attempt,
        "url.full": urlWithoutQuery(attempt.url),
        "http.request.method": "POST",
      },
    },
    context,
  );
  const own = span.spanContext();
  return {
    traceParent: formatTraceParent({
      traceId: own.traceId,
      spanId: own.spanId,
      flags: own.traceFlags.toString(16).padStart(2, "0"),
    }),
    traceState: attempt.traceState,
    end(status, error) {
      if (status !== null) span.setAttribute("http.response.status_code", status);
      if (error !== null || status === null || status >= 400) {
        span.setStatus({ code: SpanStatusCode.ERROR, ...(error ? { message: error } : {}) });
        if (error) span.setAttribute("error.type", error.slice(0, 200));
      }
      span.end();
    },
  };
}
