import type { WebhookEvent } from "@parley/client";
import type {
  DeliveryAttempt,
  EventSubscription,
  DeliveryDetail,
  DeliverySearchItem,
  DeliverySummary,
  EndpointHealth,
  HeldLane,
  Webhook,
} from "@parley/client/wire";
import type { Selectable } from "kysely";
import type {
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhooksTable,
} from "../../../db/schema.js";
import { isoTime, type DeliverableEvent } from "../../../events/event-catalogue.js";
import { roomIdsOf } from "../../../events/event-subscriptions.js";
import { authView, type StoredAuth } from "../endpoint-auth.js";
import { maskHeaderValue } from "../mask-header-value.js";
import { maskLoggedRequestHeaders, maskLoggedResponseHeaders } from "../mask-logged-headers.js";

type Headers = Record<string, string>;

function parseHeaders(json: string | null): Headers | null {
  return json === null ? null : (JSON.parse(json) as Headers);
}

function mapHeaders(headers: Headers | null, mask: (headers: Headers) => Headers): Headers | null {
  return headers === null ? null : mask(headers);
}

/**
 * The public shapes of endpoints and their delivery log: the wire's types (@parley/client/wire),
 * so a view that drifts from the schemas the routes answer with does not compile.
 */
export type { DeliveryDetail, DeliverySearchItem, DeliverySummary, EndpointHealth, HeldLane };

/** An endpoint, built from a row without its secret, which is never shown. */
export type WebhookView = Webhook;
export type AttemptView = DeliveryAttempt;

/** Attempts of the last 24 hours of one endpoint: how many succeeded, and latency -> count. */
export interface AttemptStats {
  attempts: number;
  successes: number;
  /** [duration ms, attempts that took it], ascending. */
  latencies: Array<[number, number]>;
}

export type WebhookRow = Pick<
  Selectable<WebhooksTable>,
  | "id"
  | "name"
  | "url"
  | "events"
  | "enabled"
  | "created_at"
  | "updated_at"
  | "signature_scheme"
  | "payload_format"
  | "trace_context"
  | "room_filter"
  | "headers_ciphertext"
  | "max_per_second"
  | "disabled_reason"
  | "disabled_at"
  | "consecutive_failures"
  | "last_success_at"
  | "last_failure_at"
  | "last_error"
  | "circuit"
  | "ordering"
  | "auth_ciphertext"
  | "tls_subject"
  | "tls_expires_at"
  | "public_key"
  | "verification"
  | "failing_since"
  | "disabled_delivery_id"
  | "disabled_attempt"
>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

/** The auto-disable rule in effect (config); either number 0 turns it off. */
export interface AutoDisableSetting {
  minFailures: number;
  afterMs: number;
}

/** What a delivery's view needs to know beyond its row. */
export interface DeliveryContext {
  /** Whether its endpoint is enabled now: an unfinished delivery of a disabled one is held. */
  endpointEnabled: boolean;
  /** PARLEY_WEBHOOK_MAX_ATTEMPTS. */
  maxAttempts: number;
}
export type DeliverySummaryRow = Omit<
  DeliveryRow,
  | "body"
  | "locked_until"
  | "locked_by"
  | "room_id"
  | "message_id"
  | "lane"
  | "trace_parent"
  | "trace_state"
>;
export type AttemptRow = Selectable<WebhookAttemptsTable>;

const NO_ATTEMPTS: AttemptStats = { attempts: 0, successes: 0, latencies: [] };

export function toWebhookView(
  row: WebhookRow,
  extras: {
    headers: Record<string, string> | null;
    /** The endpoint's auth, opened (its view masks it). */
    auth?: StoredAuth | null | undefined;
    stats?: AttemptStats | undefined;
    heldLanes?: HeldLane[] | undefined;
    autoDisable: AutoDisableSetting;
  },
): WebhookView {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(extras.headers ?? {}))
    headers[name] = maskHeaderValue(value);
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    events: JSON.parse(row.events) as EventSubscription[],
    enabled: row.enabled === 1,
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
    signatureScheme: row.signature_scheme,
    payloadFormat: row.payload_format,
    traceContext: row.trace_context === 1,
    roomIds: roomIdsOf(row.room_filter),
    headers,
    maxDeliveriesPerSecond: row.max_per_second,
    disabledReason: row.enabled === 1 ? null : (row.disabled_reason ?? "manual"),
    disabledAt: row.enabled === 1 || row.disabled_at === null ? null : isoTime(row.disabled_at),
    ...stateOf(row, extras.autoDisable),
    health: toHealth(row, extras.stats ?? NO_ATTEMPTS),
    ordering: row.ordering,
    heldLanes: extras.heldLanes ?? [],
    auth: authView(extras.auth ?? null),
    tls:
      row.tls_subject === null || row.tls_expires_at === null
        ? null
        : { subject: row.tls_subject, expiresAt: isoTime(row.tls_expires_at) },
    publicKey: row.public_key,
    verification: row.verification,
  };
}

/**
 * The endpoint's state in words a receiver's owner can act on (docs/webhooks.md, "Endpoint
 * states"): failing while its last attempt failed, with when the auto-disable rule (record-
 * attempts.ts, disableEndpoints) will disable it if nothing succeeds: at its first failed attempt
 * after `failing_since + afterMs`, once `minFailures` attempts in a row have failed.
 */
function stateOf(
  row: WebhookRow,
  rule: AutoDisableSetting,
): Pick<WebhookView, "state" | "autoDisableAt" | "failuresToAutoDisable" | "disabledBy"> {
  if (row.enabled !== 1) {
    const blamed =
      row.disabled_reason !== null &&
      row.disabled_reason !== "manual" &&
      row.disabled_delivery_id !== null &&
      row.disabled_attempt !== null;
    return {
      state: "disabled",
      autoDisableAt: null,
      failuresToAutoDisable: null,
      disabledBy: blamed
        ? { deliveryId: row.disabled_delivery_id!, attempt: row.disabled_attempt! }
        : null,
    };
  }
  if (row.consecutive_failures === 0 || row.failing_since === null)
    return { state: "enabled", autoDisableAt: null, failuresToAutoDisable: null, disabledBy: null };
  const ruleOn = rule.minFailures > 0 && rule.afterMs > 0;
  return {
    state: "failing",
    autoDisableAt: ruleOn ? isoTime(row.failing_since + rule.afterMs) : null,
    failuresToAutoDisable: ruleOn ? Math.max(0, rule.minFailures - row.consecutive_failures) : null,
    disabledBy: null,
  };
}

function toHealth(row: WebhookRow, stats: AttemptStats): EndpointHealth {
  return {
    attempts24h: stats.attempts,
    successRate24h: stats.attempts === 0 ? null : stats.successes / stats.attempts,
    p50LatencyMs24h: percentile(stats, 0.5),
    p95LatencyMs24h: percentile(stats, 0.95),
    lastSuccessAt: row.last_success_at === null ? null : isoTime(row.last_success_at),
    lastFailureAt: row.last_failure_at === null ? null : isoTime(row.last_failure_at),
    lastError: row.last_error,
    consecutiveFailures: row.consecutive_failures,
    failingSince:
      row.consecutive_failures === 0 || row.failing_since === null
        ? null
        : isoTime(row.failing_since),
    circuit: row.circuit,
  };
}

/** Nearest-rank percentile over the latency histogram. */
function percentile(stats: AttemptStats, p: number): number | null {
  if (stats.attempts === 0) return null;
  const rank = Math.max(1, Math.ceil(p * stats.attempts));
  let seen = 0;
  for (const [latency, count] of stats.latencies) {
    seen += count;
    if (seen >= rank) return latency;
  }
  return stats.latencies.at(-1)?.[0] ?? null;
}

/** Unfinished deliveries of a disabled endpoint wait (the test event excepted: it is sent). */
function isHeld(row: DeliverySummaryRow, context: DeliveryContext): boolean {
  return (
    !context.endpointEnabled &&
    (row.status === "PENDING" || row.status === "FAILED") &&
    row.event !== "WEBHOOK_TEST"
  );
}

export function toDeliverySummary(
  row: DeliverySummaryRow,
  context: DeliveryContext,
): DeliverySummary {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    event: row.event as DeliverableEvent,
    status: row.status,
    attempts: row.attempts,
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
    nextAttemptAt: row.next_attempt_at === null ? null : isoTime(row.next_attempt_at),
    lastResponseStatus: row.last_response_status,
    // Rows inserted without one (by hand) read as their own id, as migration 007 numbered them.
    eventId: row.event_id ?? `evt_${String(row.id).padStart(26, "0")}`,
    held: isHeld(row, context),
    maxAttempts: context.maxAttempts,
    redeliveryOf: row.redelivery_of,
  };
}

export function toAttemptView(row: AttemptRow): AttemptView {
  return {
    attempt: row.attempt,
    startedAt: isoTime(row.started_at),
    durationMs: row.duration_ms,
    responseStatus: row.response_status,
    responseBody: row.response_body,
    error: row.error,
    // Masked when recorded; masked again for attempts recorded before that was so.
    requestHeaders: mapHeaders(parseHeaders(row.request_headers), maskLoggedRequestHeaders),
    responseHeaders: mapHeaders(parseHeaders(row.response_headers), maskLoggedResponseHeaders),
  };
}

export function toDeliveryDetail(
  row: DeliveryRow,
  extras: {
    attempts: AttemptRow[];
    webhook: { name: string; url: string; enabled: boolean };
    redeliveries: Array<Pick<DeliveryRow, "id" | "status" | "created_at">>;
    maxAttempts: number;
  },
): DeliveryDetail {
  return {
    ...toDeliverySummary(row, {
      endpointEnabled: extras.webhook.enabled,
      maxAttempts: extras.maxAttempts,
    }),
    payload: JSON.parse(row.body) as WebhookEvent,
    attemptHistory: extras.attempts.map(toAttemptView),
    webhookName: extras.webhook.name,
    webhookUrl: extras.webhook.url,
    redeliveries: extras.redeliveries.map((r) => ({
      id: r.id,
      status: r.status,
      createdAt: isoTime(r.created_at),
    })),
  };
}
