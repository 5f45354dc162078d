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

/**
 * How a request's trace reaches the units of work it starts. The hot write routes (posting and
 * the inbound routes) hand `request.trace` down to the domain call, which hands it to the unit of
 * work: nothing else is needed. The other write routes carry it in an AsyncLocalStorage for the
 * whole handling of the request. On Node 20 an AsyncLocalStorage in use puts a hook on every
 * promise the process makes (measured: about 30 µs more CPU per ingest request, a quarter of it,
 * and all of the cost of exporting spans), so the storage is switched off whenever no request
 * carries a trace in it: the hooks then cost nothing.
 */
const storage = new AsyncLocalStorage<RequestTrace>();
let carried = 0;

/**
 * Runs `work` (a Fastify hook's `done`) with `trace` current across its asynchronous work; answers
 * the function to call once the request is over (its response closed), which switches the storage
 * off when no other request carries a trace. Calling it again does nothing.
 */
export function carryTrace(trace: RequestTrace, work: () => void): () => void {
  carried++;
  let released = false;
  storage.run(trace, work);
  return () => {
    if (released) return;
    released = true;
    carried--;
    // Work a request left running after its response (rare) loses its trace: its events start
    // one of their own.
    if (carried === 0) storage.disable();
  };
}

/**
 * The current request's trace when it carries one (carryTrace), read where a unit of work starts
 * (in the request's own async context: a batched commit may run it in another's); undefined
 * outside any request, and in the routes that hand their trace down instead.
 */
export function currentTrace(): RequestTrace | undefined {
  return storage.getStore();
}
