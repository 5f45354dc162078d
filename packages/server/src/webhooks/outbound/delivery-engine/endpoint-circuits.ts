import type { Circuit } from "../../../db/schema.js";
import type { AttemptOutcomeKind } from "./delivery-metrics.js";

/** An endpoint's circuit breaker, as the health shows it. */
export type { Circuit };

export interface CircuitSettings {
  /** The ceiling of an endpoint's window (PARLEY_WEBHOOK_PER_ENDPOINT_CONCURRENCY). */
  perEndpointLimit: number;
  /** Time-outs or connection failures in a row that open the circuit. */
  failureThreshold: number;
  /** How long a circuit stays open before its first probe; doubles after each failed probe. */
  cooldownMs: number;
  /** The longest an open circuit waits between probes. */
  maxCooldownMs: number;
}

export const CIRCUIT_DEFAULTS: Omit<CircuitSettings, "perEndpointLimit"> = {
  failureThreshold: 3,
  cooldownMs: 10_000,
  maxCooldownMs: 300_000,
};

/**
 * How an attempt ended, for the breaker: `answered` (a response arrived in time, whatever its
 * status: the receiver is there), `stalled` (a time-out, or no connection: DNS, TCP or TLS
 * failed), `other` (refused by the SSRF guard, or not sent: says nothing of the receiver).
 */
export type SendResult = "answered" | "stalled" | "other";

export function sendResultOf(kind: AttemptOutcomeKind): SendResult {
  switch (kind) {
    case "success":
    case "http_error":
      return "answered";
    case "timeout":
    case "connection_error":
    case "dns_error":
    case "tls_error":
      return "stalled";
    case "refused":
      return "other";
  }
}

/** A circuit that changed state: told to the metrics, the log and the endpoint's health. */
export interface CircuitChange {
  webhookId: number;
  circuit: Circuit;
  /** The stalled attempts in a row when it opened; 0 otherwise. */
  failures: number;
  /**
   * Not a change: the first answer this process saw from the endpoint, told so that the stored
   * circuit is right after a restart.
   */
  initial?: boolean;
}

interface EndpointEntry {
  circuit: Circuit;
  /** Most sends in flight at once while closed: 1 at first, +1 per answer, back to 1 on a stall. */
  window: number;
  inFlight: number;
  /** Stalled attempts in a row. */
  stalls: number;
  /** It has answered this process at least once. */
  answered: boolean;
  /** While open: when the next probe may go. */
  openUntil: number;
  /** The open period now in force (doubles per failed probe). */
  cooldownMs: number;
  /** Half-open: the probe is out. */
  probing: boolean;
  /** This process has told the database the endpoint's circuit at least once. */
  told: boolean;
  /** When its last send ended. */
  lastEndedAt: number;
}

/**
 * A closed endpoint with nothing in flight for this long is forgotten (deleted endpoints, ones
 * whose events stopped): it starts again as a new one, with a window of one.
 */
export const IDLE_FORGET_MS = 10 * 60_000;

/**
 * Each endpoint's send window and circuit breaker in this process: the rules that keep a dead
 * receiver from slowing a healthy one (docs/webhooks.md, "Fair sending").
 *
 * - Window. An endpoint starts with one send in flight; each answer (any status) lets it have one
 *   more, up to the per-endpoint limit; a time-out or a connection failure puts it back to one.
 *   So a receiver that never answers holds one send at a time, however much is queued for it.
 * - Breaker. `failureThreshold` stalled attempts in a row open the circuit: nothing is sent for
 *   `cooldownMs`, then it is half-open and one delivery goes as a probe. An answer closes it; a
 *   stall opens it again for twice as long (up to `maxCooldownMs`). The deliveries that wait are
 *   not attempted, so they keep their attempts for when the receiver is back.
 *
 * `rooms()` turns this into the claim's per-endpoint room; an endpoint absent from its map (never
 * seen by this process) has the room of a new one: 1.
 */
export class EndpointCircuits {
  private readonly entries = new Map<number, EndpointEntry>();
  /** The room of an endpoint this process has not sent to yet. */
  static readonly NEW_ENDPOINT_ROOM = 1;

  constructor(private readonly settings: CircuitSettings) {}

  /**
   * The room of every endpoint that differs from a new one's, for the claim, and how much of it
   * belongs to stalled endpoints (`stalledRoom`: their sends take wait slots); also moves open
   * circuits whose cool-down is over to half-open (answered in `changes`).
   */
  rooms(
    now: number,
    changes: CircuitChange[] = [],
  ): { rooms: Map<number, number>; stalledRoom: number } {
    const rooms = new Map<number, number>();
    let stalledRoom = 0;
    for (const [webhookId, entry] of this.entries) {
      if (
        entry.circuit === "closed" &&
        entry.inFlight === 0 &&
        now - entry.lastEndedAt > IDLE_FORGET_MS
      ) {
        this.entries.delete(webhookId);
        continue;
      }
      if (entry.circuit === "open" && now >= entry.openUntil) {
        entry.circuit = "half-open";
        changes.push({ webhookId, circuit: "half-open", failures: 0 });
      }
      const room = this.roomOf(entry);
      if (room !== EndpointCircuits.NEW_ENDPOINT_ROOM) rooms.set(webhookId, room);
      if (entry.stalls > 0) stalledRoom += room;
    }
    return { rooms, stalledRoom };
  }

  private roomOf(entry: EndpointEntry): number {
    switch (entry.circuit) {
      case "closed":
        return Math.max(0, entry.window - entry.inFlight);
      case "open":
        // Its probe goes once `rooms` has seen the cool-down is over and made it half-open.
        return 0;
      case "half-open":
        return entry.probing || entry.inFlight > 0 ? 0 : 1;
    }
  }

  /**
   * It answered this process, and no attempt stalled since: its sends take send slots. Any other
   * endpoint (new to this process, or whose last attempt timed out or could not connect) sends
   * from wait slots, so receivers that hang cannot hold the send slots even for a moment.
   */
  isProven(webhookId: number): boolean {
    const entry = this.entries.get(webhookId);
    return entry !== undefined && entry.answered && entry.stalls === 0;
  }

  circuitOf(webhookId: number): Circuit {
    return this.entries.get(webhookId)?.circuit ?? "closed";
  }

  /** A delivery to the endpoint is being sent. */
  launched(webhookId: number): void {
    const entry = this.entryOf(webhookId);
    entry.inFlight++;
    if (entry.circuit === "half-open") entry.probing = true;
  }

  /**
   * A send to the endpoint ended. Answers the change of its circuit, if any: closed by an answer
   * (or the first answer this process saw, so the stored health is right after a restart), open
   * after a stall.
   */
  ended(webhookId: number, result: SendResult, now: number): CircuitChange | undefined {
    const entry = this.entryOf(webhookId);
    entry.inFlight = Math.max(0, entry.inFlight - 1);
    entry.lastEndedAt = now;
    const wasProbe = entry.probing;
    entry.probing = false;
    const { perEndpointLimit, failureThreshold, cooldownMs, maxCooldownMs } = this.settings;
    if (result === "answered") {
      entry.stalls = 0;
      entry.answered = true;
      entry.window = Math.min(perEndpointLimit, entry.window + 1);
      const reopened = entry.circuit !== "closed";
      entry.circuit = "closed";
      entry.cooldownMs = cooldownMs;
      if (reopened || !entry.told) {
        entry.told = true;
        return {
          webhookId,
          circuit: "closed",
          failures: 0,
          ...(reopened ? {} : { initial: true }),
        };
      }
      return undefined;
    }
    if (result === "other") return undefined;
    entry.stalls++;
    entry.window = 1;
    if (entry.circuit === "half-open" && wasProbe) {
      entry.cooldownMs = Math.min(maxCooldownMs, entry.cooldownMs * 2);
      return this.open(webhookId, entry, now);
    }
    if (entry.circuit === "closed" && entry.stalls >= failureThreshold) {
      entry.cooldownMs = cooldownMs;
      return this.open(webhookId, entry, now);
    }
    return undefined;
  }

  /**
   * The endpoint has sends out and no room for more (its window is full, or its probe is out): it
   * may have more due, to claim when one of its sends ends.
   */
  isFull(webhookId: number): boolean {
    const entry = this.entries.get(webhookId);
    return (
      entry !== undefined &&
      entry.inFlight > 0 &&
      entry.circuit !== "open" &&
      this.roomOf(entry) === 0
    );
  }

  /** The earliest time an open circuit may send its probe; null when none is open. */
  nextProbeAt(): number | null {
    let at: number | null = null;
    for (const entry of this.entries.values())
      if (entry.circuit === "open" && (at === null || entry.openUntil < at)) at = entry.openUntil;
    return at;
  }

  /**
   * Endpoints by circuit state: those sent to in the last IDLE_FORGET_MS, or open, or with sends
   * out (those never seen count as closed, and are not counted).
   */
  counts(): Record<Circuit, number> {
    const counts: Record<Circuit, number> = { closed: 0, open: 0, "half-open": 0 };
    for (const entry of this.entries.values()) counts[entry.circuit]++;
    return counts;
  }

  private open(webhookId: number, entry: EndpointEntry, now: number): CircuitChange {
    entry.circuit = "open";
    entry.openUntil = now + entry.cooldownMs;
    entry.told = true;
    return { webhookId, circuit: "open", failures: entry.stalls };
  }

  private entryOf(webhookId: number): EndpointEntry {
    let entry = this.entries.get(webhookId);
    if (!entry) {
      entry = {
        circuit: "closed",
        window: EndpointCircuits.NEW_ENDPOINT_ROOM,
        inFlight: 0,
        stalls: 0,
        answered: false,
        openUntil: 0,
        cooldownMs: this.settings.cooldownMs,
        probing: false,
        told: false,
        lastEndedAt: 0,
      };
      this.entries.set(webhookId, entry);
    }
    return entry;
  }
}
