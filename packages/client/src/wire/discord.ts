/**
 * The Discord-compatible inbound route: Discord's Execute Webhook body and message object, so
 * that tools with a "Discord webhook" setting (and discord.js' WebhookClient) post into Parley.
 * Field names are Discord's (snake_case), not Parley's.
 */
import { Type, type Static } from "@sinclair/typebox";
import { Id, Nullable } from "./common.js";

const version = Type.String({
  description: "Discord's API version, `v6` to `v10` (any other answers 400, code 50041).",
});
const webhookId = Type.String({
  description: "The inbound webhook's id (a string, as Discord's snowflakes are).",
});
const token = Type.String({ description: "The webhook's token (43 characters)." });

export const DiscordWebhookParamsSchema = Type.Object({ version, id: webhookId, token });

/** `.../messages/{messageId}`: a message this webhook posted. */
export const DiscordMessageParamsSchema = Type.Object({
  version,
  id: webhookId,
  token,
  messageId: Type.String({ description: "The Parley message id." }),
});

export const DiscordExecuteQuerySchema = Type.Object({
  wait: Type.Optional(
    Type.Boolean({
      description: "true: answer 200 with the message object; otherwise 204 without a body.",
    }),
  ),
  thread_id: Type.Optional(
    Id({ description: "Post as a reply in this thread (a top-level message of the room)." }),
  ),
});

/** `thread_id` on the message routes is accepted and not needed (message ids are global). */
export const DiscordMessageQuerySchema = Type.Object({
  thread_id: Type.Optional(Id({ description: "Accepted and ignored." })),
});

/** A JSON object of Discord's own (an embed, allowed_mentions): checked field by field by the server. */
const DiscordObject = Type.Unsafe<Record<string, unknown>>({ type: "object" });

const messageFields = {
  content: Type.Optional(
    Type.String({ description: "Markdown; with the embeds, at most 16384 UTF-8 bytes." }),
  ),
  embeds: Type.Optional(
    Type.Array(DiscordObject, {
      description:
        "Up to 10: title, url, description, fields, author, footer, timestamp, color, image; rendered to markdown after the content.",
    }),
  ),
  allowed_mentions: Type.Optional(DiscordObject),
};

export const DiscordExecuteParamsSchema = Type.Object(
  {
    ...messageFields,
    username: Type.Optional(
      Type.String({ description: "Used only when the webhook allows overrides." }),
    ),
    avatar_url: Type.Optional(
      Type.String({ description: "Used only when the webhook allows overrides." }),
    ),
    tts: Type.Optional(Type.Boolean()),
  },
  {
    description:
      "Discord's Execute Webhook body, as JSON or as multipart/form-data with the JSON in a `payload_json` field. File parts answer 400. Unknown fields are ignored.",
  },
);
export type DiscordExecuteParams = Static<typeof DiscordExecuteParamsSchema>;

export const DiscordEditParamsSchema = Type.Object(messageFields, {
  description:
    "Discord's Edit Webhook Message body: content and embeds together replace the message; without either the message is unchanged. Unknown fields are ignored.",
});
export type DiscordEditParams = Static<typeof DiscordEditParamsSchema>;

/** A Parley message in the shape of Discord's message object (the fields tools read). */
export const DiscordMessageSchema = Type.Object({
  id: Type.String({ description: "The Parley message id." }),
  type: Type.Integer({ description: "Always 0 (a default message)." }),
  channel_id: Type.String({ description: "The room id." }),
  content: Type.String({ description: "The message as stored: content and embeds as markdown." }),
  timestamp: Type.String({ format: "date-time" }),
  edited_timestamp: Nullable(Type.String({ format: "date-time" })),
  webhook_id: Type.String({ description: "The inbound webhook's id." }),
  author: Type.Object({
    id: Type.String({ description: "The inbound webhook's id." }),
    username: Type.String({ description: "The name the message shows." }),
    avatar: Nullable(Type.String()),
    bot: Type.Boolean(),
  }),
  embeds: Type.Array(DiscordObject, { description: "Always empty: embeds are in content." }),
  attachments: Type.Array(DiscordObject),
  mentions: Type.Array(DiscordObject),
  mention_roles: Type.Array(Type.String()),
  mention_everyone: Type.Boolean(),
  pinned: Type.Boolean(),
  tts: Type.Boolean(),
  flags: Type.Integer(),
});
export type DiscordMessage = Static<typeof DiscordMessageSchema>;

/** Every failure on the Discord route: Discord's `{message, code}` (and its extras). */
export const DiscordErrorSchema = Type.Object(
  {
    message: Type.String(),
    code: Type.Optional(
      Type.Integer({
        description: "Discord's JSON error code (none on a 429); 0 where Discord has none.",
      }),
    ),
    errors: Type.Optional(DiscordObject),
    retry_after: Type.Optional(Type.Number({ description: "Seconds, on a 429." })),
    global: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true },
);
export type DiscordError = Static<typeof DiscordErrorSchema>;
