/** How long a "no endpoint sends trace context" answer is trusted before asking again. */
export const TRACE_GATE_REFRESH_MS = 10_000;

/**
 * Whether requests need their trace carried to the deliveries they cause: always while
 * OpenTelemetry exports, otherwise while an enabled endpoint has `traceContext` on. Carrying it
 * makes the request's trace current across its asynchronous work (AsyncLocalStorage), which on
 * Node 20 puts a hook on every promise: measured at about a quarter more CPU per ingest request,
 * so Parley pays it only when something uses the trace (docs/webhooks.md, "Trace context").
 *
 * The answer is read from the database at most every TRACE_GATE_REFRESH_MS, without making a
 * request wait for it; an endpoint switched on in this process counts at once, one switched on
 * by another process within that time.
 */
export class TraceGate {
  private wanted: boolean;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private checking = false;

  constructor(
    /** Whether an enabled endpoint has trace context on (endpoints-repository.ts). */
    private readonly anyTracedEndpoint: () => Promise<boolean>,
    private readonly exporting: boolean,
    private readonly now: () => number = Date.now,
  ) {
    this.wanted = exporting;
  }

  /** Whether this request's trace should be carried (and a refresh started when due). */
  carry(): boolean {
    if (this.exporting) return true;
    if (!this.checking && this.now() - this.checkedAt >= TRACE_GATE_REFRESH_MS) this.refresh();
    return this.wanted;
  }

  /** An endpoint of this process now sends trace context: carry traces from now on. */
  endpointTraced(): void {
    this.wanted = true;
  }

  private refresh(): void {
    this.checking = true;
    this.anyTracedEndpoint()
      .then(
        (traced) => {
          this.wanted = traced;
          this.checkedAt = this.now();
        },
        // The database is unreachable: keep the last answer and ask again next time.
        () => undefined,
      )
      .finally(() => {
        this.checking = false;
      });
  }
}
