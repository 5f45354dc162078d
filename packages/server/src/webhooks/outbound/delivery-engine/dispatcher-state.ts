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
  /** Send slots: most deliveries being sent at once to endpoints that answer. */
  concurrency: number;
  /** Most deliveries being sent at once to one endpoint (the ceiling of its window). */
  perEndpointLimit: number;
  /**
   * Wait slots: most sends held apart from the send slots at once (sends to endpoints not known
   * to answer, and sends that outlasted `slowAfterMs`).
   */
  waitLimit: number;
}

/** Which pool a send counts against. */
export type SendPool = "send" | "wait";

/**
 * The dispatcher's state, every field named, with the invariants that tie the fields together
 * checked in one place (`violations`). The dispatcher changes it only through the methods below;
 * in tests (and with PARLEY_DEBUG_INVARIANTS=1) it checks the invariants after every change.
 *
 * Each claimed delivery goes: claimed -> sending (counts against a pool and its endpoint's window)
 * -> answered, waiting to be recorded (`toRecord`) -> being recorded (`recordingBatch`) ->
 * recorded (forgotten). It stays in `unrecorded` from the claim until it is recorded, so a claim
 * that renews our own lease (the recording was late) never sends it twice.
 *
 * A send counts against one of two pools: a send slot (`sending`, at most `concurrency`) or a
 * wait slot (`waiting`, at most `waitLimit`). Sends to endpoints that answer take send slots;
 * sends to endpoints not known to answer, and sends that outlasted the slow threshold (moved by
 * `demote`), take wait slots, so receivers that hang cannot hold the send slots.
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

  /** Deliveries being sent in send slots. */
  sending = 0;
  /** Deliveries being sent in wait slots. */
  waiting = 0;
  /** Of all being sent, how many wait for the send slot of their endpoint's rate cap. */
  pacing = 0;
  /** Deliveries being sent (either pool), by endpoint. */
  readonly sendingByEndpoint = new Map<number, number>();
  /** The pool of each delivery being sent. */
  readonly poolOf = new Map<number, SendPool>();
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
   * How many rows the next claim may take: the free send slots, plus free wait slots up to
   * `stalledRoom` (the room of endpoints whose sends go straight to wait slots), bounded by
   * backpressure (when recording falls behind, a slow database, stop taking work rather than
   * pile up finished attempts in memory: at most `maxUnrecorded`).
   */
  freeSlots(stalledRoom = 0): number {
    const { concurrency, waitLimit } = this.limits;
    return Math.min(
      concurrency - this.sending + Math.min(waitLimit - this.waiting, stalledRoom),
      this.maxUnrecorded() - this.unrecorded.size,
    );
  }

  /** Every slot in flight plus as many answers again as there are send slots. */
  maxUnrecorded(): number {
    return 2 * this.limits.concurrency + this.limits.waitLimit;
  }

  /** The pool a new send goes to: its preferred one when it has room, else the other. */
  poolFor(preferred: SendPool): SendPool {
    const sendFree = this.sending < this.limits.concurrency;
    const waitFree = this.waiting < this.limits.waitLimit;
    if (preferred === "send") return sendFree || !waitFree ? "send" : "wait";
    return waitFree || !sendFree ? "wait" : "send";
  }

  /** A claimed row we may send: not one of ours still waiting to be recorded, and not stopping. */
  mayLaunch(row: ClaimedDelivery): boolean {
    return !this.unrecorded.has(row.id) && !this.stopping;
  }

  launched(row: ClaimedDelivery, pool: SendPool): void {
    this.unrecorded.add(row.id);
    if (pool === "send") this.sending++;
    else this.waiting++;
    this.poolOf.set(row.id, pool);
    this.sendingByEndpoint.set(
      row.webhook_id,
      (this.sendingByEndpoint.get(row.webhook_id) ?? 0) + 1,
    );
  }

  /**
   * A send in a send slot outlasted the slow threshold: it moves to a wait slot (when one is
   * free), so the send slot goes to another delivery. True when it moved.
   */
  demote(deliveryId: number): boolean {
    if (this.poolOf.get(deliveryId) !== "send" || this.waiting >= this.limits.waitLimit)
      return false;
    this.poolOf.set(deliveryId, "wait");
    this.sending--;
    this.waiting++;
    return true;
  }

  /** The answer is in: the slot is free; the row stays leased to us until it is recorded. */
  answered(finished: Finished): void {
    if (this.poolOf.get(finished.row.id) === "wait") this.waiting--;
    else this.sending--;
    this.poolOf.delete(finished.row.id);
    const endpoint = finished.row.webhook_id;
    const left = (this.sendingByEndpoint.get(endpoint) ?? 1) - 1;
    if (left > 0) this.sendingByEndpoint.set(endpoint, left);
    else this.sendingByEndpoint.delete(endpoint);
    this.toRecord.push(finished);
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
    const { concurrency, perEndpointLimit, waitLimit } = this.limits;
    let perEndpointSum = 0;
    for (const [endpoint, n] of this.sendingByEndpoint) {
      perEndpointSum += n;
      if (n <= 0) problems.push(`endpoint ${endpoint} is kept with ${n} in flight`);
      if (n > perEndpointLimit)
        problems.push(`endpoint ${endpoint} has ${n} in flight, over its cap ${perEndpointLimit}`);
    }
    const inFlight = this.sending + this.waiting;
    if (perEndpointSum !== inFlight)
      problems.push(`${inFlight} being sent but the endpoints count ${perEndpointSum}`);
    if (this.poolOf.size !== inFlight)
      problems.push(`${inFlight} being sent but ${this.poolOf.size} have a pool`);
    if (this.sending < 0 || this.sending > concurrency)
      problems.push(`sending is ${this.sending}, outside 0..${concurrency}`);
    if (this.waiting < 0 || this.waiting > waitLimit)
      problems.push(`waiting is ${this.waiting}, outside 0..${waitLimit}`);
    if (this.pacing < 0 || this.pacing > inFlight)
      problems.push(`${this.pacing} waiting for a rate slot, outside 0..${inFlight} being sent`);
    const accounted = inFlight + this.toRecord.length + this.recordingBatch;
    if (accounted !== this.unrecorded.size)
      problems.push(
        `${this.unrecorded.size} unrecorded but ${inFlight} being sent + ` +
          `${this.toRecord.length} answered + ${this.recordingBatch} recording`,
      );
    if (this.unrecorded.size > this.maxUnrecorded())
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
