import { timestamp } from "../../http/schemas.js";

/** JSON schemas of the inbound-webhook routes, shared by the admin and ingest plugins. */

// 1..200 characters, not only spaces, no NUL (which PostgreSQL text cannot hold).
const displayName = {
  type: "string",
  minLength: 1,
  maxLength: 200,
  pattern: "^(?=[^\\u0000]*$)[\\s\\S]*\\S",
} as const;
const avatarUrl = {
  type: ["string", "null"],
  maxLength: 2048,
  pattern: "^[^\\u0000-\\u001f\\u007f]*$",
  description: "Absolute http(s) URL of the sender's avatar, or null.",
} as const;

const viewProperties = {
  id: { type: "integer" },
  roomId: { type: "integer" },
  displayName: { type: "string" },
  avatarUrl: { type: ["string", "null"] },
  enabled: { type: "boolean" },
  allowOverrides: {
    type: "boolean",
    description: "Slack-format posts may set their own username and icon_url for one message.",
  },
  tokenLast8: { type: "string", description: "The last 8 characters of the token." },
  createdAt: timestamp,
  updatedAt: timestamp,
} as const;

const viewRequired = [
  "id",
  "roomId",
  "displayName",
  "avatarUrl",
  "enabled",
  "allowOverrides",
  "tokenLast8",
  "createdAt",
  "updatedAt",
] as const;

export const inboundWebhookSchema = {
  type: "object",
  properties: viewProperties,
  required: viewRequired,
} as const;

export const inboundWebhookWithTokenSchema = {
  type: "object",
  properties: {
    ...viewProperties,
    token: { type: "string", description: "Shown only in this answer; store it now." },
    url: { type: "string", description: "The ingest URL (native JSON form)." },
    slackUrl: {
      type: "string",
      description: "The ingest URL for Slack incoming-webhook payloads.",
    },
  },
  required: [...viewRequired, "token", "url", "slackUrl"],
} as const;

export const createInboundWebhookBody = {
  type: "object",
  additionalProperties: false,
  required: ["roomId", "displayName"],
  properties: {
    roomId: { type: "integer", minimum: 1 },
    displayName,
    avatarUrl,
    enabled: { type: "boolean", default: true },
    allowOverrides: { type: "boolean", default: false },
  },
} as const;

export const updateInboundWebhookBody = {
  type: "object",
  additionalProperties: false,
  properties: {
    displayName,
    avatarUrl,
    enabled: { type: "boolean" },
    allowOverrides: { type: "boolean" },
  },
} as const;

export const ingestBodySchema = {
  type: "object",
  description:
    "Unknown fields are ignored (senders are third-party tools). A body that is not a JSON object answers 400 validation_failed.",
  properties: {
    content: { type: "string", description: "1..16384 UTF-8 bytes." },
    contentFormat: { type: "string", enum: ["markdown", "html"], default: "markdown" },
  },
  required: ["content"],
} as const;

export const ingestAnswerSchema = {
  type: "object",
  properties: { messageId: { type: "integer" }, timestamp },
  required: ["messageId", "timestamp"],
} as const;

export const tokenParams = {
  type: "object",
  properties: { token: { type: "string", description: "The webhook's token (43 characters)." } },
  required: ["token"],
} as const;

/** Slack incoming-webhook payload, documented (not enforced: Slack ignores what it does not know). */
export const slackBodySchema = {
  type: "object",
  description:
    "Slack incoming-webhook JSON, or form-encoded `payload=<json>`. text, attachments and blocks are rendered to markdown; username and icon_url apply only when the webhook allows overrides.",
  properties: {
    text: { type: "string" },
    mrkdwn: { type: "boolean" },
    username: { type: "string" },
    icon_url: { type: "string" },
    icon_emoji: { type: "string" },
    channel: { type: "string" },
    attachments: { type: "array", items: { type: "object" } },
    blocks: { type: "array", items: { type: "object" } },
  },
} as const;

export const slackTextAnswer = {
  type: "string",
  description: "`ok` on success; otherwise a short error code, as Slack answers.",
} as const;
