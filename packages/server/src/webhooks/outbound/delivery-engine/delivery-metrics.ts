import { sql, type Kysely } from "kysely";
import client from "prom-client";
import type { Circuit, Database } from "../../../db/schema.js";
import type { AttemptOutcome } from "../transport/webhook-sender.js";

/** What the dispatcher has out now, read at scrape time. */
export interface SendsSnapshot {
  /** Deliveries being sent, by slot pool and by their endpoint's circuit. */
  sends: Array<{ pool: "send" | "wait"; circuit: Circuit; count: number }>;
  /** Endpoints this process has sent to, by circuit. */
  endpoints: Record<Circuit, number>;
}

export type AttemptOutcomeKind =
  "success" | "http_error" | "timeout" | "connection_error" | "dns_error" | "refused" | "tls_error";

export interface DeliveryMetrics {
  /** Counts one attempt and its latency. */
  attempt(outcome: AttemptOutcome): void;
  /** Counts a delivery that reached a final state. */
  finished(state: "SUCCESS" | "EXHAUSTED"): void;
  /** Counts an endpoint Parley disabled (410 Gone, or the auto-disable rule). */
  endpointDisabled(reason: "gone" | "auto_failing"): void;
  /** Counts attempts that waited: for the endpoint's rate cap, or for a receiver's Retry-After. */
  attemptsDelayed(cause: "rate_cap" | "retry_after", count: number): void;
  /** Counts a change of an endpoint's circuit breaker. */
  circuitChanged?(circuit: Circuit): void;
  /** Reads the dispatcher's sends at scrape time (one dispatcher per registry). */
  watchSends?(read: () => SendsSnapshot): void;
}

/**
 * Sorts an attempt into one outcome label. The sender reports failures as text for the attempt log;
 * its wording is stable (see describe-send-error.ts), and any failure without a response that is
 * not recognised counts as a connection error.
 */
export function outcomeKind(outcome: AttemptOutcome): AttemptOutcomeKind {
  if (outcome.ok) return "success";
  const error = outcome.error ?? "";
  if (/timed out/i.test(error)) return "timeout";
  if (outcome.responseStatus !== null) return "http_error";
  if (/^DNS lookup failed/.test(error)) return "dns_error";
  if (/^target refused/.test(error)) return "refused";
  if (/^TLS error/.test(error)) return "tls_error";
  return "connection_error";
}

/**
 * The delivery engine's instruments on the app's registry: deliveries by final state, attempts by
 * outcome, attempt latency, and two gauges read from the database at scrape time (due rows and
 * the age of the oldest), which stay right with several processes sharing one database.
 */
export function createDeliveryMetrics(
  db: Kysely<Database>,
  registry: client.Registry,
  now: () => number = Date.now,
): DeliveryMetrics {
  const deliveries = new client.Counter({
    name: "parley_webhook_deliveries_total",
    help: "Outbound webhook deliveries that reached a final state, by state",
    labelNames: ["state"] as const,
    registers: [registry],
  });
  const attempts = new client.Counter({
    name: "parley_webhook_attempts_total",
    help: "Outbound webhook delivery attempts by outcome",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const latency = new client.Histogram({
    name: "parley_webhook_attempt_duration_seconds",
    help: "Duration of outbound webhook delivery attempts, by outcome",
    labelNames: ["outcome"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });

  // Both gauges come from one query per scrape: the registry collects every metric in the same
  // tick, so the second gauge finds the query the first one started still in flight.
  let pending: Promise<{ depth: number; oldestAgeSeconds: number }> | undefined;
  const queueState = () =>
    (pending ??= (async () => {
      try {
        const at = now();
        const { rows } = await sql<{ depth: number | string; oldest: number | string | null }>`
          SELECT count(*) AS depth, min(next_attempt_at) AS oldest
          FROM webhook_deliveries
          WHERE next_attempt_at <= ${at} AND status IN ('PENDING', 'FAILED')
        `.execute(db);
        const row = rows[0];
        const oldest = row?.oldest == null ? null : Number(row.oldest);
        return {
          depth: Number(row?.depth ?? 0),
          oldestAgeSeconds: oldest === null ? 0 : Math.max(0, (at - oldest) / 1000),
        };
      } finally {
        pending = undefined;
      }
    })());

  new client.Gauge({
    name: "parley_webhook_queue_depth",
    help: "Outbound webhook deliveries due now (pending or awaiting a retry), in flight included",
    registers: [registry],
    async collect() {
      this.set((await queueState()).depth);
    },
  });
  new client.Gauge({
    name: "parley_webhook_oldest_due_age_seconds",
    help: "How long the oldest due outbound webhook delivery has been waiting (0 when none)",
    registers: [registry],
    async collect() {
      this.set((await queueState()).oldestAgeSeconds);
    },
  });

  const disabledTotal = new client.Counter({
    name: "parley_webhook_endpoints_disabled_total",
    help: "Outbound webhook endpoints disabled by Parley, by reason (gone: a 410 answer; auto_failing: the auto-disable rule)",
    labelNames: ["reason"] as const,
    registers: [registry],
  });
  const delayed = new client.Counter({
    name: "parley_webhook_attempts_delayed_total",
    help: "Outbound webhook attempts that waited beyond their schedule, by cause (rate_cap, retry_after)",
    labelNames: ["cause"] as const,
    registers: [registry],
  });
  // Read at scrape time, like the queue gauges, so every process reports the same.
  new client.Gauge({
    name: "parley_webhook_endpoints_disabled",
    help: "Outbound webhook endpoints disabled now, by reason (manual, gone, auto_failing)",
    labelNames: ["reason"] as const,
    registers: [registry],
    async collect() {
      const { rows } = await sql<{ reason: string | null; n: number | string }>`
        SELECT disabled_reason AS reason, count(*) AS n FROM webhooks WHERE enabled = 0
        GROUP BY disabled_reason
      `.execute(db);
      this.reset();
      for (const reason of ["manual", "gone", "auto_failing"]) this.set({ reason }, 0);
      for (const row of rows) this.inc({ reason: row.reason ?? "manual" }, Number(row.n));
    },
  });

  let readSends: (() => SendsSnapshot) | undefined;
  new client.Gauge({
    name: "parley_webhook_sends_in_flight",
    help: "Outbound webhook deliveries being sent by this process, by slot pool (send: the PARLEY_WEBHOOK_CONCURRENCY slots; wait: sends to endpoints not known to answer, and slow sends) and by their endpoint's circuit (closed, half-open, open)",
    labelNames: ["pool", "circuit"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { pool, circuit, count } of readSends?.().sends ?? [])
        this.set({ pool, circuit }, count);
    },
  });
  new client.Gauge({
    name: "parley_webhook_circuits",
    help: "Outbound webhook endpoints this process has sent to in the last 10 minutes (and every open one), by circuit breaker state (closed, half-open, open)",
    labelNames: ["state"] as const,
    registers: [registry],
    collect() {
      this.reset();
      const endpoints = readSends?.().endpoints ?? { closed: 0, "half-open": 0, open: 0 };
      for (const [state, count] of Object.entries(endpoints)) this.set({ state }, count);
    },
  });
  const circuitChanges = new client.Counter({
    name: "parley_webhook_circuit_changes_total",
    help: "Changes of outbound webhook endpoints' circuit breakers, by the state entered (open: time-outs or connection failures in a row; half-open: a probe may go; closed: the endpoint answered)",
    labelNames: ["state"] as const,
    registers: [registry],
  });

  return {
    circuitChanged(circuit) {
      circuitChanges.inc({ state: circuit });
    },
    watchSends(read) {
      readSends = read;
    },
    endpointDisabled(reason) {
      disabledTotal.inc({ reason });
    },
    attemptsDelayed(cause, count) {
      delayed.inc({ cause }, count);
    },
    attempt(outcome) {
      const kind = outcomeKind(outcome);
      attempts.inc({ outcome: kind });
      latency.observe({ outcome: kind }, outcome.durationMs / 1000);
    },
    finished(state) {
      deliveries.inc({ state: state.toLowerCase() });
    },
  };
}
