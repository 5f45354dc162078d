import crypto from "node:crypto";
import { parseTraceParent } from "@opentelemetry/core";

/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/) as Parley carries it: a request's
 * `traceparent` (version 00: trace id, parent span id, flags) and its `tracestate`, parsed by the
 * OpenTelemetry core library's parser, so what it refuses (a zero trace id, a bad length, version
 * ff) is refused here the same way.
 */
export interface TraceParent {
  traceId: string;
  spanId: string;
  /** The trace flags as two hex digits ("01": sampled). */
  flags: string;
}

/** `00-<trace id>-<span id>-<flags>`. */
export function formatTraceParent(parent: TraceParent): string {
  return `00-${parent.traceId}-${parent.spanId}-${parent.flags}`;
}

/** The header's trace, or undefined when it is absent or not a valid traceparent. */
export function readTraceParent(header: string | string[] | undefined): TraceParent | undefined {
  if (typeof header !== "string") return undefined;
  const context = parseTraceParent(header.trim());
  if (!context) return undefined;
  return {
    traceId: context.traceId,
    spanId: context.spanId,
    flags: context.traceFlags.toString(16).padStart(2, "0"),
  };
}

/** A new span id: 8 random bytes, never all zero. */
export function newSpanId(): string {
  let id: string;
  do id = crypto.randomBytes(8).toString("hex");
  while (id === "0000000000000000");
  return id;
}

/** A new trace id: 16 random bytes, never all zero. */
export function newTraceId(): string {
  let id: string;
  do id = crypto.randomBytes(16).toString("hex");
  while (id === "00000000000000000000000000000000");
  return id;
}

/** A `tracestate` worth carrying: at most 512 characters (the limit W3C asks to keep), no controls. */
export function readTraceState(header: string | string[] | undefined): string | undefined {
  if (typeof header !== "string") return undefined;
  const value = header.trim();
  if (value === "" || value.length > 512 || !/^[\x20-\x7e]+$/.test(value)) return undefined;
  return value;
}
