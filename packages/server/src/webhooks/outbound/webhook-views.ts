import type { Selectable } from "kysely";
import type {
  DeliveryStatus,
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhooksTable,
} from "../../db/schema.js";
import { isoTime } from "../../events/event-catalogue.js";

/** The public shape of an endpoint. Built from a row without its secret, which is never shown. */
export interface WebhookView {
  id: number;
  name: string;
  url: string;
  events: string[];
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

export type WebhookRow = Omit<Selectable<WebhooksTable>, "secret_ciphertext">;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type DeliverySummaryRow = Omit<DeliveryRow, "body" | "locked_until" | "locked_by">;
export type AttemptRow = Selectable<WebhookAttemptsTable>;

export interface DeliverySummary {
  id: number;
  webhookId: number;
  event: string;
  status: DeliveryStatus;
  attempts: number;
  createdAt: string;
  updatedAt: string;
  nextAttemptAt: string | null;
  lastResponseStatus: number | null;
}

export interface AttemptView {
  attempt: number;
  startedAt: string;
  durationMs: number;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
}

export interface DeliveryDetail extends DeliverySummary {
  /** The envelope exactly as queued, parsed. */
  payload: unknown;
  attemptHistory: AttemptView[];
}

export function toWebhookView(row: WebhookRow): WebhookView {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    enabled: row.enabled === 1,
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
  };
}

export function toDeliverySummary(row: DeliverySummaryRow): DeliverySummary {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    event: row.event,
    status: row.status,
    attempts: row.attempts,
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
    nextAttemptAt: row.next_attempt_at === null ? null : isoTime(row.next_attempt_at),
    lastResponseStatus: row.last_response_status,
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
  };
}

export function toDeliveryDetail(row: DeliveryRow, attempts: AttemptRow[]): DeliveryDetail {
  return {
    ...toDeliverySummary(row),
    payload: JSON.parse(row.body) as unknown,
    attemptHistory: attempts.map(toAttemptView),
  };
}
