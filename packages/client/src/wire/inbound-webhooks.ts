/** Inbound webhooks: their admin API (all editions) and the public ingest routes. */
import { Type, type Static } from "@sinclair/typebox";
import { Id, listQueryProperties, Nullable, Timestamp } from "./common.js";
import { messageBodyProperties, threadIdProperty } from "./messages.js";

const inboundWebhookProperties = {
  id: Id(),
  roomId: Id(),
  displayName: Type.String(),
  avatarUrl: Nullable(Type.String()),
  enabled: Type.Boolean(),
  /** Slack-format posts may set their own `username` and `icon_url` for one message. */
  allowOverrides: Type.Boolean({
    description: "Slack-format posts may set their own username and icon_url for one message.",
  }),
  /** The last 8 characters of the token: enough to recognise it, never to use it. */
  tokenLast8: Type.String({ description: "The last 8 characters of the token." }),
  /** Whether a signing secret is set (the secret itself is never shown). */
  signingSecretSet: Type.Boolean({
    description: "Whether a signing secret is set for /github and /stripe (never shown).",
  }),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
};

export const InboundWebhookSchema = Type.Object(inboundWebhookProperties);
export type InboundWebhook = Static<typeof InboundWebhookSchema>;

/** Answered on create and on rotate-token only: the one time the token and URLs are shown. */
export const InboundWebhookWithTokenSchema = Type.Object({
  ...inboundWebhookProperties,
  token: Type.String({ description: "Shown only in this answer; store it now." }),
  /** The ingest URL for Parley's JSON `{content, contentFormat}`. */
  url: Type.String({ description: "The ingest URL (native JSON form)." }),
  /** The ingest URL for Slack incoming-webhook payloads (`{text, attachments, ...}`). */
  slackUrl: Type.String({ description: "The ingest URL for Slack incoming-webhook payloads." }),
  /** Discord's Execute Webhook address (`.../discord/v10/webhooks/{id}/{token}`). */
  discordUrl: Type.String({
    description: "The Discord-compatible address: Discord's Execute Webhook, API version 10.",
  }),
  /** Where GitHub delivers (`.../ingest/{token}/github`). */
  githubUrl: Type.String({ description: "The address for GitHub webhook deliveries." }),
  /** Where Stripe delivers (`.../ingest/{token}/stripe`). */
  stripeUrl: Type.String({ description: "The address for Stripe events." }),
});
/** Answered on create and on rotate-token only: the one time the token and URLs are shown. */
export type InboundWebhookWithToken = Static<typeof InboundWebhookWithTokenSchema>;

// 1..200 characters, not only spaces. (The server refuses U+0000 in every field.)
const displayName = Type.String({ minLength: 1, maxLength: 200, pattern: "\\S" });
const avatarUrl = Nullable(
  Type.String({ maxLength: 2048, pattern: "^[^\\u0000-\\u001f\\u007f]*$" }),
  { description: "Absolute http(s) URL of the sender's avatar, or null." },
);

/** Write-only: 16..1024 characters; null removes it. */
const signingSecret = Nullable(Type.String(), {
  description:
    "Write-only. The secret GitHub or Stripe signs with (16 to 1024 characters): /github and /stripe then refuse unsigned or wrongly signed requests with 401 invalid_signature. null removes it.",
});

export const CreateInboundWebhookParamsSchema = Type.Object(
  {
    roomId: Id(),
    displayName,
    avatarUrl: Type.Optional(avatarUrl),
    enabled: Type.Optional(Type.Boolean({ default: true })),
    allowOverrides: Type.Optional(Type.Boolean({ default: false })),
    signingSecret: Type.Optional(signingSecret),
  },
  { additionalProperties: false },
);
export type CreateInboundWebhookParams = Static<typeof CreateInboundWebhookParamsSchema>;

export const UpdateInboundWebhookParamsSchema = Type.Object(
  {
    displayName: Type.Optional(displayName),
    avatarUrl: Type.Optional(avatarUrl),
    enabled: Type.Optional(Type.Boolean()),
    allowOverrides: Type.Optional(Type.Boolean()),
    signingSecret: Type.Optional(signingSecret),
  },
  { additionalProperties: false },
);
export type UpdateInboundWebhookParams = Static<typeof UpdateInboundWebhookParamsSchema>;

export const ListInboundWebhooksParamsSchema = Type.Object(
  { ...listQueryProperties, roomId: Type.Optional(Id()) },
  { additionalProperties: false },
);
export type ListInboundWebhooksParams = Static<typeof ListInboundWebhooksParamsSchema>;

export const IngestTokenParamsSchema = Type.Object({
  token: Type.String({ description: "The webhook's token (43 characters)." }),
});

export const IngestParamsSchema = Type.Object(
  { ...messageBodyProperties, ...threadIdProperty },
  {
    description:
      "Unknown fields are ignored (senders are third-party tools). A body that is not a JSON object answers 400 validation_failed.",
  },
);
export type IngestParams = Static<typeof IngestParamsSchema>;

export const IngestResultSchema = Type.Object({ messageId: Id(), timestamp: Timestamp() });
export type IngestResult = Static<typeof IngestResultSchema>;

/** `.../ingest/{token}/messages/{messageId}`: a message this webhook posted. */
export const IngestMessageParamsSchema = Type.Object({
  token: Type.String({ description: "The webhook's token (43 characters)." }),
  messageId: Id(),
});

/** An edit through ingest: the new content (a message cannot move to another thread). */
export const IngestEditParamsSchema = Type.Object(messageBodyProperties, {
  description:
    "Unknown fields are ignored, as on ingest. The same content rules, DLP and moderation as a post.",
});
export type IngestEditParams = Static<typeof IngestEditParamsSchema>;

/** What an edit through ingest answers. */
export const IngestEditResultSchema = Type.Object({
  messageId: Id(),
  revision: Type.Integer({ minimum: 1 }),
  editedAt: Timestamp({ description: "when the message's current revision was made" }),
});
export type IngestEditResult = Static<typeof IngestEditResultSchema>;

/** A JSON object of Slack's own (an attachment, a block): passed on, not checked field by field. */
const SlackObject = Type.Unsafe<Record<string, unknown>>({ type: "object" });

/** A Slack incoming-webhook payload, as Slack tools send it. */
export const SlackIngestParamsSchema = Type.Object(
  {
    text: Type.Optional(Type.String()),
    mrkdwn: Type.Optional(Type.Boolean()),
    username: Type.Optional(Type.String()),
    icon_url: Type.Optional(Type.String()),
    icon_emoji: Type.Optional(Type.String()),
    channel: Type.Optional(Type.String()),
    attachments: Type.Optional(Type.Array(SlackObject)),
    blocks: Type.Optional(Type.Array(SlackObject)),
  },
  {
    description:
      "Slack incoming-webhook JSON, or form-encoded `payload=<json>`. text, attachments and blocks are rendered to markdown; username and icon_url apply only when the webhook allows overrides.",
  },
);
/** A Slack incoming-webhook payload, as Slack tools send it. */
export type SlackIngestParams = Static<typeof SlackIngestParamsSchema>;

/** A GitHub webhook payload, as GitHub sends it (JSON, or form-encoded `payload=<json>`). */
export const GitHubIngestParamsSchema = Type.Unsafe<Record<string, unknown>>({
  type: "object",
  description:
    "A GitHub webhook payload; X-GitHub-Event names its event. Only the fields a message shows are read.",
});
/** A GitHub webhook payload, as GitHub sends it. */
export type GitHubIngestParams = Static<typeof GitHubIngestParamsSchema>;

/** A Stripe event object, as Stripe sends it. */
export const StripeIngestParamsSchema = Type.Object(
  { id: Type.String(), type: Type.String() },
  {
    additionalProperties: true,
    description: "A Stripe event object (`id`, `type`, `data.object`, `livemode`, ...).",
  },
);
/** A Stripe event object, as Stripe sends it. */
export type StripeIngestParams = Static<typeof StripeIngestParamsSchema>;
