import type { ClaimedDelivery } from "./claim-deliveries.js";
import type { FinishedAttempt } from "./record-attempts.js";

/** Where the dispatcher is in its life. It never goes back. */
export type Lifecycle = "created" | "running" | "stopping";

/**
 * The claim loop. A burst of wake-ups (one per committed event) schedules ONE pass on the next
 * turn of the event loop; wake-ups during a pass make it claim once more before it ends.
 */
export type PassMode = "idle" | "scheduled" | "running";

/**
 * The recorder. Answers that arrive in one turn of the event loop, or while a batch is being
 * written, are recorded together in one transaction (group commit).
 */
export type RecorderMode = "idle" | "scheduled" | "recording";

/** A claimed delivery whose attempt is finished and waits to be recorded. */
export interface Finished {
  row: ClaimedDelivery;
  attempt: FinishedAttempt;
}

export interface StateLimits {
  /** Most deliveries being sent at once. */
  concurrency: number;
  /** Most deliveries being sent at once to one endpoint. */
  perEndpointLimit: number;
}

/**
 * The dispatcher's state, every field named, with the invariants that tie the fields together
 * checked in one place (`violations`). The dispatcher changes it only through the methods below;
 * in tests (and with PARLEY_DEBUG_INVARIANTS=1) it checks the invariants after every change.
 *
 * Each claimed delivery goes: claimed -> sending (counts against the caps) -> answered, waiting to
 * be recorded (`toRecord`) -> being recorded (`recordingBatch`) -> recorded (forgotten). It stays
 * in `unrecorded` from the claim until it is recorded, so a claim that renews our own lease (the
 * recording was late) never sends it twice.
 */
export class DispatcherState {
  lifecycle: Lifecycle = "created";
  pass: PassMode = "idle";
  /** A wake-up arrived: the pass claims (again) before it ends. */
  passWanted = false;
  /** Look up the next due time in the database after this pass (sweep, timer, reconnect). */
  refreshWanted = false;
  /** The last claim may have left due rows behind: claim again when a slot frees up. */
  backlog = false;
  recorder: RecorderMode = "idle";

  /** Deliveries being sent: what the concurrency caps count. */
  sending = 0;
  /** Of those, how many wait for the send slot of their endpoint's rate cap. */
  pacing = 0;
  readonly sendingByEndpoint = new Map<number, number>();
  /** Every delivery claimed and not yet recorded (being sent, answered, or being recorded). */
  readonly unrecorded = new Set<number>();
  /** Answered, waiting for the recorder. */
  readonly toRecord: Finished[] = [];
  /** How many the recorder is writing now. */
  recordingBatch = 0;

  constructor(readonly limits: StateLimits) {}

  get stopping(): boolean {
    return this.lifecycle === "stopping";
  }

  /**
   * How many rows the next claim may take: the free send slots, bounded by backpressure (when
   * recording falls behind, a slow database, stop taking work rather than pile up finished
   * attempts in memory: at most twice the concurrency unrecorded).
   */
  freeSlots(): number {
    const { concurrency } = this.limits;
    return Math.min(concurrency - this.sending, 2 * concurrency - this.unrecorded.size);
  }

  /** A claimed row we may send: not one of ours still waiting to be recorded, and not stopping. */
  mayLaunch(row: ClaimedDelivery): boolean {
    return !this.unrecorded.has(row.id) && !this.stopping;
  }

  launched(row: ClaimedDelivery): void {
    this.unrecorded.add(row.id);
    this.sending++;
    this.sendingByEndpoint.set(
      row.webhook_id,
      (this.sendingByEndpoint.get(row.webhook_id) ?? 0) + 1,
    );
  }

  /** The answer is in: the send slot is free; the row stays leased to us until it is recorded. */
  answered(finished: Finished): void {
    this.sending--;
    const endpoint = finished.row.webhook_id;
    const left = (this.sendingByEndpoint.get(endpoint) ?? 1) - 1;
    if (left > 0) this.sendingByEndpoint.set(endpoint, left);
    else this.sendingByEndpoint.delete(endpoint);
    this.toRecord.push(finished);
  }

  /** Some endpoint is at its cap (it has more waiting, by the claim's construction). */
  anyEndpointAtCap(): boolean {
    for (const n of this.sendingByEndpoint.values())
      if (n >= this.limits.perEndpointLimit) return true;
    return false;
  }

  takeBatch(max: number): Finished[] {
    const batch = this.toRecord.splice(0, max);
    this.recordingBatch = batch.length;
    return batch;
  }

  /** The batch could not be recorded: back to the front of the queue, to be tried again. */
  putBack(batch: Finished[]): void {
    this.toRecord.unshift(...batch);
    this.recordingBatch = 0;
  }

  /** The batch is recorded (or given up at shutdown): forget its rows. */
  recorded(batch: Finished[]): void {
    for (const { row } of batch) this.unrecorded.delete(row.id);
    this.recordingBatch = 0;
  }

  /** Nothing in flight, being recorded or about to be claimed. */
  isIdle(): boolean {
    return this.pass === "idle" && this.recorder === "idle" && this.unrecorded.size === 0;
  }

  /** The invariants; empty when they all hold. */
  violations(): string[] {
    const problems: string[] = [];
    const { concurrency, perEndpointLimit } = this.limits;
    let perEndpointSum = 0;
    for (const [endpoint, n] of this.sendingByEndpoint) {
      perEndpointSum += n;
      if (n <= 0) problems.push(`endpoint ${endpoint} is kept with ${n} in flight`);
      if (n > perEndpointLimit)
        problems.push(`endpoint ${endpoint} has ${n} in flight, over its cap ${perEndpointLimit}`);
    }
    if (perEndpointSum !== this.sending)
      problems.push(`sending is ${this.sending} but the endpoints count ${perEndpointSum}`);
    if (this.sending < 0 || this.sending > concurrency)
      problems.push(`sending is ${this.sending}, outside 0..${concurrency}`);
    if (this.pacing < 0 || this.pacing > this.sending)
      problems.push(`${this.pacing} waiting for a rate slot, outside 0..${this.sending} sending`);
    const accounted = this.sending + this.toRecord.length + this.recordingBatch;
    if (accounted !== this.unrecorded.size)
      problems.push(
        `${this.unrecorded.size} unrecorded but ${this.sending} sending + ${this.toRecord.length} ` +
          `waiting + ${this.recordingBatch} recording`,
      );
    if (this.unrecorded.size > 2 * concurrency)
      problems.push(`${this.unrecorded.size} unrecorded, over the backpressure bound`);
    if (this.recorder !== "recording" && this.recordingBatch !== 0)
      problems.push(
        `a batch of ${this.recordingBatch} is recording while the recorder is ${this.recorder}`,
      );
    if (this.lifecycle === "created" && (this.pass !== "idle" || this.unrecorded.size > 0))
      problems.push("work before start");
    return problems;
  }
}

/** Thrown (in tests and debug runs) when an invariant of the dispatcher's state breaks. */
export class DispatcherInvariantError extends Error {
  constructor(
    readonly where: string,
    readonly problems: string[],
  ) {
    super(`dispatcher invariant broken after ${where}: ${problems.join("; ")}`);
    this.name = "DispatcherInvariantError";
  }
}
