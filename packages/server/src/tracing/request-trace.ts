import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The trace of the request being handled: its `traceparent` (trace id and the request's own span)
 * and the `tracestate` that came in. The fan-out writes it on every delivery the request's events
 * queue, so each attempt continues that trace (docs/webhooks.md, "Trace context").
 */
export interface RequestTrace {
  traceParent: string;
  traceState: string | null;
}

const storage = new AsyncLocalStorage<RequestTrace>();

/** Runs `work` (a Fastify hook's `done`) with `trace` as the current request's trace. */
export function runWithTrace(trace: RequestTrace, work: () => void): void {
  storage.run(trace, work);
}

/**
 * The current request's trace, read where a unit of work starts (in the request's own async
 * context: a batched commit may run it in another's); undefined outside any request.
 */
export function currentTrace(): RequestTrace | undefined {
  return storage.getStore();
}
