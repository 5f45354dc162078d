/**
 * The JSON shapes of Parley's HTTP API (DESIGN section 6). Ids are integers; timestamps are
 * ISO-8601 UTC strings with milliseconds.
 */
import type { DeliverableEvent, EventName, WebhookEvent } from "./events.js";

/** RFC 9457 problem details: every error Parley answers has this body. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  /** Stable snake_case code to branch on, e.g. `invalid_secret`, `not_found`. */
  code: string;
  /** Some codes add fields, e.g. `field` for `unknown_field`, `ruleId` for `dlp_blocked`. */
  [extension: string]: unknown;
}

/** One page of a list: pass `nextCursor` back as `cursor` for the next one; null on the last. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface ListParams {
  /** 1..200, default 50. */
  limit?: number;
  cursor?: string;
}

// Users

export type UserRole = "admin" | "bot" | "user";

export interface User {
  id: number;
  username: string;
  displayName: string;
  role: UserRole;
  status: "active" | "disabled" | "deleted";
  createdAt: string;
}

export interface CreateUserParams {
  /** Lowercase letters, digits, `.`, `_`, `-`; at most 64 characters. */
  username: string;
  displayName?: string;
  role: UserRole;
}

export interface IssuedToken {
  token: string;
  expiresAt: string;
}

// Rooms, direct messages, messages, files, moderation

/** A room, or a direct-message conversation (`kind: "dm"`, no name until it is promoted). */
export interface Room {
  id: number;
  /** null for a direct message that was not promoted. */
  name: string | null;
  kind: "room" | "dm";
  /** The creator's username; for a promoted direct message, whoever promoted it. */
  createdBy: string;
  createdAt: string;
  memberCount: number;
}

export type ContentFormat = "markdown" | "html";

export interface PostMessageParams {
  /** 1..16384 UTF-8 bytes. */
  content: string;
  /** Default `markdown`; `html` is sanitized before it is stored. */
  contentFormat?: ContentFormat;
}

export interface MessageSender {
  type: "user" | "integration";
  /** The user's id, or the inbound webhook's id for an integration message. */
  id: number;
  /** null for an integration. */
  username: string | null;
  displayName: string;
  avatarUrl: string | null;
}

export type ModerationStatus = "none" | "FLAGGED" | "QUARANTINED" | "APPROVED" | "REJECTED";

/**
 * A message. `contentRaw`, `contentText` and `contentHtml` are present when the `accept` header
 * asks for them: `mediaType: { format: "raw+json" | "text+json" | "html+json" | "full+json" }`.
 */
export interface Message {
  id: number;
  roomId: number;
  content: string;
  contentFormat: ContentFormat;
  sender: MessageSender;
  inboundWebhookId: number | null;
  moderationStatus: ModerationStatus;
  createdAt: string;
  contentRaw?: string;
  contentText?: string;
  contentHtml?: string;
}

export interface UploadedFile {
  id: number;
  roomId: number;
  fileName: string;
  fileSize: number;
  fileType: string;
  sha256: string;
  /** The uploader's username. */
  uploadedBy: string;
  createdAt: string;
}

export type FlagReviewStatus = "pending" | "approved" | "rejected";

/** A message AI moderation flagged or quarantined; `id` is `flaggedMessageId` in events. */
export interface ModerationFlag {
  id: number;
  messageId: number;
  roomId: number;
  category: string;
  score: number;
  band: "low" | "medium" | "high";
  status: "FLAGGED" | "QUARANTINED";
  reviewStatus: FlagReviewStatus;
  createdAt: string;
  reviewedAt: string | null;
  /** The reviewing admin's username. */
  reviewedBy: string | null;
}

// Outbound webhooks

/** An outbound endpoint. Its secret is never returned. */
export interface Webhook {
  id: number;
  name: string;
  url: string;
  events: EventName[];
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface CreateWebhookParams {
  /** 1..200 characters. */
  name: string;
  /** Absolute https:// URL (http:// only when the server allows it). */
  url: string;
  /** 16..1024 characters; the HMAC-SHA256 key of every delivery's signature. */
  secret: string;
  /** Non-empty, no duplicates. */
  events: EventName[];
  enabled?: boolean;
}

export type UpdateWebhookParams = Partial<CreateWebhookParams>;

export type DeliveryStatus = "PENDING" | "SUCCESS" | "FAILED" | "EXHAUSTED";

export interface DeliverySummary {
  id: number;
  webhookId: number;
  event: DeliverableEvent;
  status: DeliveryStatus;
  attempts: number;
  createdAt: string;
  updatedAt: string;
  /** When the next attempt is due; null once SUCCESS or EXHAUSTED. */
  nextAttemptAt: string | null;
  lastResponseStatus: number | null;
}

export interface DeliveryAttempt {
  attempt: number;
  startedAt: string;
  durationMs: number;
  responseStatus: number | null;
  /** The first 2048 bytes of the receiver's answer, decoded as UTF-8. */
  responseBody: string | null;
  error: string | null;
}

export interface DeliveryDetail extends DeliverySummary {
  /** The envelope exactly as queued, parsed. */
  payload: WebhookEvent;
  attemptHistory: DeliveryAttempt[];
}

export interface ListDeliveriesParams extends ListParams {
  status?: DeliveryStatus;
  event?: DeliverableEvent;
}

export interface QueuedDelivery {
  deliveryId: number;
  status: "PENDING";
}

// Inbound webhooks

export interface InboundWebhook {
  id: number;
  roomId: number;
  displayName: string;
  avatarUrl: string | null;
  enabled: boolean;
  /** Slack-format posts may set their own `username` and `icon_url` for one message. */
  allowOverrides: boolean;
  /** The last 8 characters of the token: enough to recognise it, never to use it. */
  tokenLast8: string;
  createdAt: string;
  updatedAt: string;
}

/** Answered on create and on rotate-token only: the one time the token and URLs are shown. */
export interface InboundWebhookWithToken extends InboundWebhook {
  token: string;
  /** The ingest URL for Parley's JSON `{content, contentFormat}`. */
  url: string;
  /** The ingest URL for Slack incoming-webhook payloads (`{text, attachments, ...}`). */
  slackUrl: string;
}

export interface CreateInboundWebhookParams {
  roomId: number;
  displayName: string;
  avatarUrl?: string | null;
  enabled?: boolean;
  allowOverrides?: boolean;
}

export interface UpdateInboundWebhookParams {
  displayName?: string;
  avatarUrl?: string | null;
  enabled?: boolean;
  allowOverrides?: boolean;
}

export interface IngestParams {
  content: string;
  contentFormat?: ContentFormat;
}

/** A Slack incoming-webhook payload, as Slack tools send it. */
export interface SlackIngestParams {
  text?: string;
  mrkdwn?: boolean;
  username?: string;
  icon_url?: string;
  icon_emoji?: string;
  channel?: string;
  attachments?: Record<string, unknown>[];
  blocks?: Record<string, unknown>[];
}

export interface IngestResult {
  messageId: number;
  timestamp: string;
}
