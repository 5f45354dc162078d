import { setTimeout as sleep } from "node:timers/promises";
import { maskHeaderValue } from "../mask-header-value.js";
import type { AttemptOutcome, WebhookSender } from "../transport/webhook-sender.js";
import { nextLaneCursors, type ClaimedDelivery, type ClaimMode } from "./claim-deliveries.js";
import type { DeliveriesListener } from "./deliveries-listener.js";
import type { DeliveryLog } from "./delivery-log.js";
import type { DeliveryMetrics, SendsSnapshot } from "./delivery-metrics.js";
import type { DeliveryQueue } from "./delivery-queue.js";
import { watchLeases, type LeaseWatch } from "./lease-watch.js";
import {
  DispatcherInvariantError,
  DispatcherState,
  type Finished,
  type SendPool,
} from "./dispatcher-state.js";
import { outcomeKind } from "./delivery-metrics.js";
import {
  CIRCUIT_DEFAULTS,
  EndpointCircuits,
  sendResultOf,
  type CircuitChange,
  type CircuitSettings,
} from "./endpoint-circuits.js";
import type { RetryPolicy } from "./backoff-schedule.js";
import { signPayload } from "./sign-payload.js";
import { signStandardWebhook, SigningKeyError } from "./sign-standard-webhook.js";
import { signEd25519Webhook, signingKeyFrom } from "./sign-ed25519-webhook.js";
import type { KeyObject } from "node:crypto";
import { whyHeaderIsReserved } from "../reserved-header.js";
import { loggedAuthorization, type StoredAuth } from "../endpoint-auth.js";
import type { ClientTls } from "../transport/create-connector.js";
import type { Tracer } from "@opentelemetry/api";
import { startDeliverSpan, type DeliverSpan } from "../../../tracing/deliver-span.js";
import { formatPayload } from "./format-payload.js";
import { WEBHOOK_VERIFICATION } from "../../../events/event-catalogue.js";
import { challengeOf, judgeChallengeAnswer } from "./check-challenge-answer.js";

export interface Dispatcher {
  /** Starts claiming: wake-ups, LISTEN (PostgreSQL), retry timer, sweep. */
  start(): void;
  /**
   * Stops claiming, waits for the attempts in flight to be sent and recorded, then closes the
   * sender and the LISTEN connection. Nothing is released: a row claimed but not finished keeps
   * its lease until it runs out, and is then retaken (by this or another process).
   */
  stop(): Promise<void>;
  /** Asks for a claim pass (deliveries were queued). Cheap; calls coalesce. */
  wake(): void;
  /** Resolves when nothing is in flight, being recorded or about to be claimed (tests). */
  idle(): Promise<void>;
}

/** The settings the dispatcher runs with (from the config; see create-dispatcher.ts). */
export interface DispatcherSettings {
  /** Written to `locked_by` (this process). */
  workerId: string;
  /** How long claimed rows stay ours: see `leaseFor`. */
  leaseMs: number;
  /** Send slots (PARLEY_WEBHOOK_CONCURRENCY). */
  concurrency: number;
  /** The ceiling of an endpoint's window (PARLEY_WEBHOOK_PER_ENDPOINT_CONCURRENCY). */
  perEndpointLimit: number;
  /** Wait slots (PARLEY_WEBHOOK_WAIT_SLOTS). Default 256. */
  waitLimit?: number;
  /** A send older than this leaves its send slot for a wait slot. Default: `slowAfterFor`. */
  slowAfterMs?: number;
  /** The breaker's rules. Default: CIRCUIT_DEFAULTS. */
  circuit?: Partial<Omit<CircuitSettings, "perEndpointLimit">>;
  policy: RetryPolicy;
  sweepIntervalMs: number;
}

/** Everything the dispatcher works with, handed in by its constructor. */
export interface DispatcherDeps {
  settings: DispatcherSettings;
  queue: DeliveryQueue;
  sender: WebhookSender;
  /** Decrypts an endpoint's sealed secret; throws when it cannot. */
  openSecret(ciphertext: string): string;
  /** Subscribes to this process's commits that queued deliveries; answers the unsubscribe. */
  onDeliveriesQueued(listener: () => void): () => void;
  /** LISTEN for other processes' commits (PostgreSQL); absent on SQLite. */
  listen?: (handlers: { onNotify(): void; onListening(): void }) => DeliveriesListener;
  metrics: DeliveryMetrics;
  log: DeliveryLog;
  /** An endpoint's circuit changed (after the dispatcher stored it). */
  onCircuitChange?(change: CircuitChange): void;
  now(): number;
  /** Makes each attempt's `webhook.deliver` span, when OpenTelemetry exports (tracing/). */
  tracer?: Tracer | undefined;
  /** The sender's User-Agent, for the attempt log. Default Parley-Webhooks/1.0. */
  userAgent?: string;
  /** Check the state's invariants after every change and throw when one breaks (tests). */
  checkInvariants?: boolean;
}

/**
 * The lease on a claimed delivery: always longer than one attempt can take (the sender aborts at
 * the time-out), with room for recording it, a slow database and clock skew between hosts, so a
 * slow but live attempt is never sent twice in parallel. 30 s time-out -> 65 s lease.
 */
export function leaseFor(timeoutMs: number): number {
  return timeoutMs * 2 + 5_000;
}

interface SignedRequest {
  url: string;
  body: Buffer;
  contentType: string;
  signature: string | undefined;
  headers: Record<string, string>;
  logged: Record<string, string>;
  endpointId: number;
  auth: StoredAuth | null;
  tls: ClientTls | null;
}

/**
 * When a send leaves its send slot for a wait slot: after 250 ms, or a quarter of the time-out
 * when that is shorter. Far above a healthy receiver's answer (a few ms on a LAN, ~100 ms across
 * the world), so only slow and hanging receivers move.
 */
export function slowAfterFor(timeoutMs: number): number {
  return Math.max(1, Math.min(250, Math.floor(timeoutMs / 4)));
}

/**
 * An open circuit's first cool-down: 10 s, or the retry back-off's base when that is shorter (so
 * a breaker never holds a delivery's retry back longer than its own schedule would the first
 * time); doubling per failed probe up to 5 minutes, or the back-off ceiling when shorter.
 */
export function circuitTimingFor(
  backoffBaseMs: number,
  backoffMaxMs: number,
): { cooldownMs: number; maxCooldownMs: number } {
  const cooldownMs = Math.max(1, Math.min(CIRCUIT_DEFAULTS.cooldownMs, backoffBaseMs));
  const maxCooldownMs = Math.max(
    cooldownMs,
    Math.min(CIRCUIT_DEFAULTS.maxCooldownMs, backoffMaxMs),
  );
  return { cooldownMs, maxCooldownMs };
}

/** An attempt nobody traces: no exporter, and an endpoint without trace context. */
const UNTRACED: DeliverSpan = { traceParent: "", traceState: null, end: () => undefined };

/** The event id of a delivery: the row's, or one made from its id for rows inserted by hand. */
function eventIdOf(row: ClaimedDelivery): string {
  return row.event_id ?? `evt_${String(row.id).padStart(26, "0")}`;
}

/** Most attempts recorded in one transaction. */
const RECORD_BATCH = 100;

/**
 * The delivery engine of one process: claims due deliveries under a lease, sends them concurrently
 * (at most `concurrency` at once, at most `perEndpointLimit` to one endpoint), and records each
 * attempt with its state transition.
 *
 * It claims when woken: by a local commit that queued deliveries, by a NOTIFY from another process
 * (PostgreSQL), by the retry timer (set to the earliest next attempt or lease end it knows of,
 * any process's: a crashed process's deliveries are claimed again when their lease runs out; the
 * lease watch, lease-watch.ts, sees other processes' leases in time), by the sweep (every
 * `sweepIntervalMs`: a safety net), and when a send slot frees up while due rows were left
 * behind. A database error never ends the loop: it is logged and the pass is retried with
 * back-off, so a database restart heals by itself.
 *
 * Its state, and the invariants between the fields, are in DispatcherState.
 */
export class DeliveryDispatcher implements Dispatcher {
  private readonly state: DispatcherState;
  private readonly settings: DispatcherSettings;
  private readonly circuits: EndpointCircuits;
  private readonly slowAfterMs: number;
  /** Each delivery being sent, with the timer that moves it to a wait slot when it is slow. */
  private readonly inFlight = new Map<number, { row: ClaimedDelivery; slow?: NodeJS.Timeout }>();
  /** Circuit changes are stored one after the other, in the order they happened. */
  private circuitWrites: Promise<void> = Promise.resolve();
  private readonly idleWaiters: Array<() => void> = [];
  private readonly secrets = new Map<string, string>();
  /** Where the next claim's walk over each ordered endpoint's lanes starts (claim-deliveries.ts). */
  private readonly laneCursors = new Map<number, number>();
  /** Which PostgreSQL claim runs next (claim-deliveries.ts, "Two claims"). */
  private readonly claimMode: ClaimMode = { full: true };
  private readonly opened = new Map<string, unknown>();
  private readonly signingKeys = new Map<string, KeyObject>();
  private passFailures = 0;
  private retryTimer: { at: number; handle: NodeJS.Timeout } | undefined;
  private errorTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private leaseWatch: LeaseWatch | undefined;
  private unsubscribe: (() => void) | undefined;
  private listener: DeliveriesListener | undefined;
  private stopped: Promise<void> | undefined;

  constructor(private readonly deps: DispatcherDeps) {
    this.settings = deps.settings;
    this.state = new DispatcherState({
      concurrency: deps.settings.concurrency,
      perEndpointLimit: deps.settings.perEndpointLimit,
      waitLimit: deps.settings.waitLimit ?? 256,
    });
    this.circuits = new EndpointCircuits({
      ...CIRCUIT_DEFAULTS,
      ...deps.settings.circuit,
      perEndpointLimit: deps.settings.perEndpointLimit,
    });
    this.slowAfterMs = deps.settings.slowAfterMs ?? slowAfterFor(30_000);
    deps.metrics.watchSends?.(() => this.sendsByCircuit());
  }

  /** Deliveries being sent, by pool and by their endpoint's circuit; endpoints by circuit. */
  private sendsByCircuit(): SendsSnapshot {
    const sends: SendsSnapshot["sends"] = [];
    const counts = new Map<string, number>();
    for (const [id, { row }] of this.inFlight) {
      const pool = this.state.poolOf.get(id) ?? "send";
      const key = `${pool} ${this.circuits.circuitOf(row.webhook_id)}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    for (const pool of ["send", "wait"] as const)
      for (const circuit of ["closed", "half-open", "open"] as const)
        sends.push({ pool, circuit, count: counts.get(`${pool} ${circuit}`) ?? 0 });
    return { sends, endpoints: this.circuits.counts() };
  }

  start(): void {
    if (this.state.lifecycle !== "created") return;
    this.state.lifecycle = "running";
    this.unsubscribe = this.deps.onDeliveriesQueued(() => this.wake());
    this.listener = this.deps.listen?.({
      onNotify: () => this.wake(),
      // Anything committed while the connection was down sent a NOTIFY nobody heard.
      onListening: () => this.wake(true),
    });
    this.sweepTimer = setInterval(() => this.wake(true), this.settings.sweepIntervalMs);
    this.leaseWatch = watchLeases({
      leaseMs: this.settings.leaseMs,
      sweepIntervalMs: this.settings.sweepIntervalMs,
      nextDueAt: (now) => this.deps.queue.nextDueTime(now),
      now: () => this.deps.now(),
      onDue: (at) => this.armRetryTimer(at),
    });
    this.wake(true);
  }

  wake(refresh = false): void {
    const state = this.state;
    if (state.lifecycle !== "running") return;
    state.passWanted = true;
    if (refresh) state.refreshWanted = true;
    if (state.pass !== "idle") return;
    state.pass = "scheduled";
    // setImmediate coalesces a burst of wake-ups (one per committed event) into one pass.
    setImmediate(() => void this.runPass());
  }

  idle(): Promise<void> {
    return this.state.isIdle()
      ? Promise.resolve()
      : new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.state.lifecycle = "stopping";
      this.unsubscribe?.();
      clearInterval(this.sweepTimer);
      await this.leaseWatch?.stop();
      clearTimeout(this.errorTimer);
      if (this.retryTimer) clearTimeout(this.retryTimer.handle);
      await this.listener?.close();
      await new Promise<void>((resolve) => {
        this.idleWaiters.push(resolve);
        this.settle();
      });
      await this.circuitWrites;
      await this.deps.sender.close();
    })();
    return this.stopped;
  }

  private async runPass(): Promise<void> {
    const state = this.state;
    if (state.stopping) {
      state.pass = "idle";
      return this.settle();
    }
    state.pass = "running";
    try {
      while (state.passWanted && !state.stopping) {
        state.passWanted = false;
        const claimedAt = await this.claim();
        if (state.refreshWanted) {
          state.refreshWanted = false;
          // Counted from the claim's own clock reading, not a later one: a row that fell due
          // between the two (a timer can fire a millisecond early) was not claimed, and must
          // still arm the timer instead of waiting for the sweep.
          const at = await this.deps.queue.nextDueTime(claimedAt);
          if (at !== null) this.armRetryTimer(at);
          await this.deps.queue.expireSecrets(this.deps.now());
        }
      }
      if (this.passFailures > 0)
        this.deps.log.info({}, "webhook dispatcher reached the database again");
      this.passFailures = 0;
    } catch (error) {
      this.passFailures++;
      if (this.passFailures === 1 || this.passFailures % 20 === 0) {
        this.deps.log.warn(
          { err: (error as Error).message, failures: this.passFailures },
          "webhook dispatcher could not claim deliveries; retrying",
        );
      }
      const delay = Math.min(100 * 2 ** this.passFailures, 5_000);
      clearTimeout(this.errorTimer);
      this.errorTimer = setTimeout(() => this.wake(true), delay);
    } finally {
      state.pass = "idle";
      this.checked("pass");
      this.settle();
    }
  }

  /** Claims what is due and launches it; answers the time the claim counted as now. */
  private async claim(): Promise<number> {
    const state = this.state;
    const now = this.deps.now();
    const changes: CircuitChange[] = [];
    const { rooms: roomByEndpoint, stalledRoom } = this.circuits.rooms(now, changes);
    for (const change of changes) this.circuitChanged(change);
    const free = state.freeSlots(stalledRoom);
    if (free <= 0) {
      state.backlog = true;
      return now;
    }
    const rows = await this.deps.queue.claim({
      limit: free,
      leaseMs: this.settings.leaseMs,
      workerId: this.settings.workerId,
      now,
      perEndpointLimit: this.settings.perEndpointLimit,
      roomByEndpoint,
      defaultRoom: EndpointCircuits.NEW_ENDPOINT_ROOM,
      laneCursors: this.laneCursors,
      mode: this.claimMode,
    });
    nextLaneCursors(this.laneCursors, rows);
    // A row not yet recorded here is one whose lease ran out while its result waited to be
    // recorded (database down): the claim renewed our lease; it must not be sent twice.
    for (const row of rows) if (state.mayLaunch(row)) this.launch(row);
    // Rows taken may mean more are due (or were locked by another worker a moment ago): claim
    // again when a send finishes. An endpoint whose window is full may have more waiting: its own
    // sends' ends wake the dispatcher (see launch), so a receiver that hangs for the whole
    // time-out does not make every other answer run a claim. An open circuit's deliveries wait
    // for its probe time.
    state.backlog = rows.length > 0;
    const probeAt = this.circuits.nextProbeAt();
    if (probeAt !== null) this.armRetryTimer(probeAt);
    this.checked("claim");
    return now;
  }

  /** Wakes the dispatcher when the earliest known retry is due (one timer, the earliest wins). */
  private armRetryTimer(at: number): void {
    if (this.state.stopping || (this.retryTimer && this.retryTimer.at <= at)) return;
    if (this.retryTimer) clearTimeout(this.retryTimer.handle);
    const delay = Math.min(Math.max(0, at - this.deps.now()), 2 ** 31 - 1);
    this.retryTimer = {
      at,
      handle: setTimeout(() => {
        this.retryTimer = undefined;
        // After this pass, look up the next retry: later ones were not kept by this timer.
        this.wake(true);
      }, delay),
    };
  }

  /**
   * Sends one claimed delivery. A send to an endpoint that has answered (and not stalled since)
   * takes a send slot, and moves to a wait slot if it is still out after `slowAfterMs`; a send to
   * any other endpoint (new to this process, or whose last attempt timed out or could not
   * connect) takes a wait slot from the start. So hanging receivers never hold the send slots.
   */
  private launch(row: ClaimedDelivery): void {
    const preferred: SendPool = this.circuits.isProven(row.webhook_id) ? "send" : "wait";
    const pool = this.state.poolFor(preferred);
    this.state.launched(row, pool);
    this.circuits.launched(row.webhook_id);
    const entry: { row: ClaimedDelivery; slow?: NodeJS.Timeout } = { row };
    if (pool === "send") entry.slow = setTimeout(() => this.slow(row.id), this.slowAfterMs);
    this.inFlight.set(row.id, entry);
    void this.paced(row)
      .then(() => this.attempt(row))
      .then(({ outcome, requestHeaders, sent, verifiedChallenge }) => {
        this.deps.metrics.attempt(outcome);
        clearTimeout(this.inFlight.get(row.id)?.slow);
        this.inFlight.delete(row.id);
        const wasFull = this.circuits.isFull(row.webhook_id);
        const change = this.circuits.ended(
          row.webhook_id,
          sent ? sendResultOf(outcomeKind(outcome)) : "other",
          this.deps.now(),
        );
        if (change) this.circuitChanged(change);
        this.state.answered({
          row,
          attempt: {
            deliveryId: row.id,
            attempt: row.attempts + 1,
            outcome,
            webhookId: row.webhook_id,
            ...(requestHeaders === undefined ? {} : { requestHeaders }),
            ...(verifiedChallenge === undefined ? {} : { verifiedChallenge }),
          },
        });
        this.checked("answer");
        this.scheduleFlush();
        // A rate-capped endpoint's next slot is free now, or a full window has room again: claim,
        // even if the last claim found nothing (its rows were waiting for this then).
        if (this.state.backlog || row.send_at !== null || wasFull) this.wake();
      });
  }

  /**
   * Waits for the send slot the claim reserved for a row of a rate-capped endpoint (at most
   * RATE_HORIZON_MS). The row holds its send slot meanwhile, so the caps still count it.
   */
  private async paced(row: ClaimedDelivery): Promise<void> {
    const wait = row.send_at === null ? 0 : row.send_at - this.deps.now();
    if (wait <= 0) return;
    this.deps.metrics.attemptsDelayed("rate_cap", 1);
    this.state.pacing++;
    this.checked("pace");
    await sleep(wait);
    this.state.pacing--;
  }

  /** A send outlasted `slowAfterMs`: its send slot goes to the next delivery. */
  private slow(deliveryId: number): void {
    const entry = this.inFlight.get(deliveryId);
    if (entry) delete entry.slow;
    if (!this.state.demote(deliveryId)) return;
    this.checked("slow");
    if (this.state.backlog) this.wake();
  }

  /**
   * An endpoint's circuit changed: counted, logged, and stored for its health (in order, after
   * the changes before it; a failure to store is logged and the next change stores afresh).
   */
  private circuitChanged(change: CircuitChange): void {
    const { webhookId, circuit, failures } = change;
    if (!change.initial) this.deps.metrics.circuitChanged?.(circuit);
    if (circuit === "open")
      this.deps.log.warn(
        { webhookId, failures },
        "webhook endpoint timed out or could not be reached repeatedly; its circuit is open",
      );
    const at = this.deps.now();
    this.circuitWrites = this.circuitWrites
      .then(() => this.deps.queue.recordCircuit(webhookId, circuit, at))
      .catch((error: unknown) =>
        this.deps.log.warn(
          { webhookId, circuit, err: (error as Error).message },
          "webhook dispatcher could not store an endpoint's circuit",
        ),
      );
    this.deps.onCircuitChange?.(change);
  }

  private async attempt(row: ClaimedDelivery): Promise<{
    outcome: AttemptOutcome;
    requestHeaders?: Record<string, string>;
    /** False when nothing went out (the secret could not be opened, or gives no usable key). */
    sent: boolean;
    /** An ownership challenge answered as asked: its challenge. */
    verifiedChallenge?: string;
  }> {
    let request: SignedRequest;
    // The attempt's place in its event's trace (its webhook.deliver span when exported): made
    // only when something uses it, an exporter or an endpoint that sends trace context.
    const span =
      this.deps.tracer === undefined && row.trace_context !== 1
        ? UNTRACED
        : startDeliverSpan(this.deps.tracer, {
            deliveryId: row.id,
            webhookId: row.webhook_id,
            eventId: eventIdOf(row),
            event: row.event,
            attempt: row.attempts + 1,
            url: row.url,
            traceParent: row.trace_parent,
            traceState: row.trace_state,
          });
    try {
      request = this.signedRequest(row, span);
    } catch (error) {
      span.end(null, "not sent");
      return {
        sent: false,
        outcome: {
          ok: false,
          startedAt: new Date(),
          durationMs: 0,
          responseStatus: null,
          responseBody: null,
          error:
            error instanceof SigningKeyError
              ? error.message
              : "the endpoint secret cannot be decrypted (was PARLEY_SECRET_KEY changed?)",
        },
      };
    }
    let outcome = await this.deps.sender.send(request);
    let verifiedChallenge: string | undefined;
    if (row.event === WEBHOOK_VERIFICATION) {
      // The ownership check passes on a 2xx answer that echoes the challenge; a 2xx without it
      // is a failed attempt, retried as any other.
      const challenge = challengeOf(row.body);
      const judged = judgeChallengeAnswer(outcome, challenge);
      outcome = judged.outcome;
      if (judged.verified) verifiedChallenge = challenge;
    }
    span.end(outcome.responseStatus, outcome.ok ? null : outcome.error);
    return {
      outcome,
      requestHeaders: request.logged,
      sent: true,
      ...(verifiedChallenge === undefined ? {} : { verifiedChallenge }),
    };
  }

  /**
   * The request of one attempt, signed by the endpoint's scheme: Parley's own
   * `X-Webhook-Signature-256` (parley, both), Standard Webhooks' three headers (standard-webhooks,
   * both: `v1,` HMAC entries; standard-webhooks-ed25519: `v1a,` ed25519 entries; the timestamp is
   * this attempt's, so that signature is made afresh each time, with one entry per secret or key
   * during a rotation overlap, the new one first), then the endpoint's own headers. `logged` is
   * what the attempt log keeps: every header sent, custom values masked.
   */
  private signedRequest(row: ClaimedDelivery, span: DeliverSpan): SignedRequest {
    const secret = this.secretOf(row.secret_ciphertext);
    const payload = formatPayload(row.payload_format, row.body, eventIdOf(row));
    const body = payload.body;
    const scheme = row.signature_scheme;
    const headers: Record<string, string> = { ...payload.headers };
    if (row.trace_context === 1) {
      headers.traceparent = span.traceParent;
      if (span.traceState !== null) headers.tracestate = span.traceState;
    }
    let signature: string | undefined;
    if (scheme === "parley" || scheme === "both") signature = signPayload(secret, body);
    if (scheme !== "parley") {
      const id = eventIdOf(row);
      const timestamp = Math.floor(this.deps.now() / 1000);
      const signatures: string[] = [];
      if (scheme === "standard-webhooks-ed25519") {
        if (row.signing_key_ciphertext === null)
          throw new SigningKeyError(
            "the endpoint has no ed25519 key pair: rotate its key (rotate-secret)",
          );
        signatures.push(
          signEd25519Webhook(this.signingKeyOf(row.signing_key_ciphertext), id, timestamp, body),
        );
        if (row.previous_signing_key_ciphertext !== null) {
          const previous = this.signingKeyOf(row.previous_signing_key_ciphertext);
          signatures.push(signEd25519Webhook(previous, id, timestamp, body));
        }
      } else {
        signatures.push(signStandardWebhook(secret, id, timestamp, body));
        if (row.previous_secret_ciphertext !== null) {
          const previous = this.secretOf(row.previous_secret_ciphertext);
          signatures.push(signStandardWebhook(previous, id, timestamp, body));
        }
      }
      headers["webhook-id"] = id;
      headers["webhook-timestamp"] = String(timestamp);
      headers["webhook-signature"] = signatures.join(" ");
    }
    const logged: Record<string, string> = {
      "content-type": payload.contentType,
      "user-agent": this.deps.userAgent ?? "Parley-Webhooks/1.0",
      ...(signature === undefined ? {} : { "x-webhook-signature-256": signature }),
      ...headers,
    };
    const auth = this.openedOf<StoredAuth>(row.auth_ciphertext);
    if (auth !== null) logged.authorization = loggedAuthorization(auth);
    if (row.headers_ciphertext !== null) {
      const custom = this.openedOf<Record<string, string>>(row.headers_ciphertext)!;
      for (const [name, value] of Object.entries(custom)) {
        // Stored before its name was reserved: sent, it would break the attempt or the framing.
        if (whyHeaderIsReserved(name) !== undefined) continue;
        // The endpoint's auth writes Authorization: a custom one would send two.
        if (auth !== null && name === "authorization") continue;
        headers[name] = value;
        logged[name] = maskHeaderValue(value);
      }
    }
    return {
      url: row.url,
      body,
      contentType: payload.contentType,
      signature,
      headers,
      logged,
      endpointId: row.webhook_id,
      auth,
      tls: this.openedOf<ClientTls>(row.tls_ciphertext),
    };
  }

  /** A sealed JSON setting (headers, auth, tls), opened and parsed once per ciphertext. */
  private openedOf<T>(ciphertext: string | null): T | null {
    if (ciphertext === null) return null;
    let value = this.opened.get(ciphertext);
    if (value === undefined) {
      value = JSON.parse(this.deps.openSecret(ciphertext)) as unknown;
      if (this.opened.size >= 1_000) this.opened.clear();
      this.opened.set(ciphertext, value);
    }
    return value as T;
  }

  /** The private key of a sealed ed25519 key (opened and parsed once, then kept). */
  private signingKeyOf(ciphertext: string): KeyObject {
    let key = this.signingKeys.get(ciphertext);
    if (key === undefined) {
      key = signingKeyFrom(this.deps.openSecret(ciphertext));
      if (this.signingKeys.size >= 1_000) this.signingKeys.clear();
      this.signingKeys.set(ciphertext, key);
    }
    return key;
  }

  private secretOf(ciphertext: string): string {
    let secret = this.secrets.get(ciphertext);
    if (secret === undefined) {
      secret = this.deps.openSecret(ciphertext);
      if (this.secrets.size >= 1_000) this.secrets.clear();
      this.secrets.set(ciphertext, secret);
    }
    return secret;
  }

  /**
   * Records finished attempts in batches (group commit): every answer that arrived in the same
   * turn of the event loop, or while the previous batch was being written, goes into one
   * transaction. better-sqlite3 is synchronous, so without the deferral each answer would be
   * written alone (measured: one transaction per attempt, a third of the burst rate).
   */
  private scheduleFlush(): void {
    if (this.state.recorder !== "idle") return;
    this.state.recorder = "scheduled";
    setImmediate(() => void this.flushRecords());
  }

  private async flushRecords(): Promise<void> {
    const state = this.state;
    state.recorder = "recording";
    let failures = 0;
    // A recorded attempt of an ordered lane may let the lane's next delivery go (or, failed, it
    // holds the lane until its retry): claim again, even when the last claim found nothing,
    // since the lane's rows were waiting for this recording then (the claim reads the database).
    let laneMoved = false;
    try {
      while (state.toRecord.length > 0) {
        const batch = state.takeBatch(RECORD_BATCH);
        if (!(await this.recordBatch(batch, ++failures))) {
          state.putBack(batch);
          await sleep(Math.min(100 * 2 ** failures, 5_000));
          continue;
        }
        failures = 0;
        if (batch.some((item) => item.row.lane !== null)) laneMoved = true;
        state.recorded(batch);
        this.checked("record");
      }
    } finally {
      state.recorder = "idle";
    }
    if (state.backlog || laneMoved) this.wake();
    this.settle();
  }

  /**
   * Writes one batch. False when it should be tried again (the database failed); true when it is
   * done with: recorded, or given up at shutdown with the database unreachable (the leases run
   * out and the deliveries are attempted again: at least once, by this process after a restart or
   * by another one).
   */
  private async recordBatch(batch: Finished[], failures: number): Promise<boolean> {
    try {
      // Checked endpoints first: a crash before the recording sends the challenge again, which
      // changes nothing; the other order could record its success and leave the endpoint pending.
      const verified = batch.flatMap(({ attempt }) =>
        attempt.verifiedChallenge === undefined || attempt.webhookId === undefined
          ? []
          : [{ webhookId: attempt.webhookId, challenge: attempt.verifiedChallenge }],
      );
      if (verified.length > 0) await this.deps.queue.markVerified(verified);
      const transitions = await this.deps.queue.record(
        batch.map((item) => item.attempt),
        { workerId: this.settings.workerId, policy: this.settings.policy, now: this.deps.now() },
      );
      for (const transition of transitions) {
        if (!transition.recorded) continue;
        if (transition.status === "FAILED") this.armRetryTimer(transition.nextAttemptAt!);
        else if (transition.status !== "PENDING") this.deps.metrics.finished(transition.status);
      }
      return true;
    } catch (error) {
      if (!this.state.stopping || failures < 5) {
        if (failures === 1 || failures % 20 === 0) {
          this.deps.log.warn(
            { err: (error as Error).message, attempts: batch.length, failures },
            "webhook dispatcher could not record attempts; retrying",
          );
        }
        return false;
      }
      this.deps.log.error(
        { err: (error as Error).message, attempts: batch.length },
        "webhook dispatcher gave up recording attempts at shutdown; they will be retried",
      );
      return true;
    }
  }

  private settle(): void {
    if (this.state.isIdle()) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private checked(where: string): void {
    if (!this.deps.checkInvariants) return;
    const problems = this.state.violations();
    if (problems.length > 0) throw new DispatcherInvariantError(where, problems);
  }
}
