/** Messages, files and the moderation review queue. */
import { Type, type Static } from "@sinclair/typebox";
import { Id, listQueryProperties, Nullable, StringEnum, Timestamp } from "./common.js";

/** The largest message, in UTF-8 bytes. */
export const MAX_CONTENT_BYTES = 16384;

export const CONTENT_FORMATS = ["markdown", "html"] as const;
export const ContentFormatSchema = StringEnum(CONTENT_FORMATS);
export type ContentFormat = Static<typeof ContentFormatSchema>;

/**
 * A message's fields, for members and inbound webhooks alike. The schema documents them; the
 * server checks them with its content rules, so every path answers the same codes
 * (content_required, content_too_large, invalid_content_format) rather than a schema error.
 */
export const messageBodyProperties = {
  /** 1..16384 bytes in UTF-8 (bytes, not characters); no U+0000. */
  content: Type.String({
    minLength: 1,
    description: `1 to ${MAX_CONTENT_BYTES} bytes in UTF-8 (bytes, not characters); no U+0000`,
  }),
  /** Default `markdown`; `html` is sanitized before it is stored. */
  contentFormat: Type.Optional(StringEnum(CONTENT_FORMATS, { default: "markdown" })),
};

/** A post's `threadId`: the id of a top-level, not deleted message of the same room. */
export const threadIdProperty = {
  threadId: Type.Optional(
    Id({
      description:
        "reply in this thread: the id of a top-level, not deleted message of the same room (else 400 invalid_thread)",
    }),
  ),
};

/** The most files one message carries. */
export const MAX_MESSAGE_FILES = 10;

/** A post's `fileIds`: files the poster uploaded to the room that no message carries yet. */
export const fileIdsProperty = {
  fileIds: Type.Optional(
    Type.Array(Id(), {
      description: `at most ${MAX_MESSAGE_FILES} different files you uploaded to this room (POST .../files) that no message carries yet; each file goes with one message (else 400 invalid_file)`,
    }),
  ),
};

export const PostMessageParamsSchema = Type.Object(
  { ...messageBodyProperties, ...threadIdProperty, ...fileIdsProperty },
  { additionalProperties: false },
);
export type PostMessageParams = Static<typeof PostMessageParamsSchema>;

/** An edit: the new content (a message cannot move to another thread). */
export const EditMessageParamsSchema = Type.Object(messageBodyProperties, {
  additionalProperties: false,
});
export type EditMessageParams = Static<typeof EditMessageParamsSchema>;

export const MessageSenderSchema = Type.Object({
  type: StringEnum(["user", "integration"]),
  /** The user's id, or the inbound webhook's id for an integration message. */
  id: Id({ description: "the user's id, or the inbound webhook's id" }),
  /** null for an integration. */
  username: Nullable(Type.String(), { description: "null for an integration" }),
  displayName: Type.String(),
  avatarUrl: Nullable(Type.String(), { description: "null for a user" }),
});
export type MessageSender = Static<typeof MessageSenderSchema>;

export const MODERATION_STATUSES = [
  "none",
  "FLAGGED",
  "QUARANTINED",
  "APPROVED",
  "REJECTED",
] as const;
export const ModerationStatusSchema = StringEnum(MODERATION_STATUSES);
export type ModerationStatus = Static<typeof ModerationStatusSchema>;

/** The members who reacted to a message with one emoji. */
export const MessageReactionSchema = Type.Object({
  emoji: Type.String({ description: "one Unicode emoji (a shortcode is stored as its emoji)" }),
  count: Type.Integer({ minimum: 1 }),
  usernames: Type.Array(Type.String(), { description: "the first 20 who reacted, oldest first" }),
});
export type MessageReaction = Static<typeof MessageReactionSchema>;

/** A file a message carries; its bytes: GET /api/rooms/{roomId}/files/{id}. */
export const MessageFileSchema = Type.Object({
  id: Id({ description: "GET /api/rooms/{roomId}/files/{id} serves it" }),
  name: Type.String({ description: "the file's name, as uploaded (a base name)" }),
  size: Type.Integer({ minimum: 0, description: "bytes" }),
  mediaType: Type.String({ description: "the media type its uploader declared" }),
});
export type MessageFile = Static<typeof MessageFileSchema>;

const storedMessageProperties = {
  id: Id(),
  roomId: Id(),
  content: Type.String({ description: "as stored: markdown, or HTML sanitized on write" }),
  contentFormat: ContentFormatSchema,
  sender: MessageSenderSchema,
  inboundWebhookId: Nullable(Id()),
  moderationStatus: ModerationStatusSchema,
  createdAt: Timestamp(),
  threadId: Nullable(Id(), { description: "the thread's top-level message; null at top level" }),
  replyCount: Type.Integer({ description: "replies in its thread, deleted ones included" }),
  lastReplyAt: Nullable(Timestamp()),
  revision: Type.Integer({ minimum: 1, description: "1 for the original; each edit adds one" }),
  editedAt: Nullable(Timestamp()),
  updatedAt: Timestamp({
    description:
      "its creation, then its latest change: edit, delete, reaction, a reply in its thread",
  }),
  reactions: Type.Array(MessageReactionSchema, {
    description: "one entry per emoji, in the order each was first used",
  }),
  files: Type.Array(MessageFileSchema, {
    description: "the files posted with it (fileIds), in the order they were uploaded",
  }),
};

/** A message as stored: what posting a message and listing a room's messages answer. */
export const StoredMessageSchema = Type.Object(storedMessageProperties);
export type StoredMessage = Static<typeof StoredMessageSchema>;

/**
 * A deleted message, as lists show it (its content and revisions are gone): threads keep their
 * shape, and a deleted top-level message keeps its thread's count, so a reader can still open the
 * replies. Fetching or editing it answers 410 message_deleted.
 */
export const DeletedMessageSchema = Type.Object({
  id: Id(),
  roomId: Id(),
  threadId: Nullable(Id()),
  deleted: Type.Literal(true),
  deletedAt: Timestamp(),
  replyCount: Type.Integer({ description: "replies in its thread, deleted ones included" }),
  lastReplyAt: Nullable(Timestamp()),
});
export type DeletedMessage = Static<typeof DeletedMessageSchema>;

/** An item of a message list: a message, or a deleted one's tombstone (`deleted: true`). */
export const MessageListItemSchema = Type.Union([StoredMessageSchema, DeletedMessageSchema]);
export type MessageListItem = Static<typeof MessageListItemSchema>;

/**
 * `GET .../messages`: top-level messages newest first; `threadId`: that thread's replies, oldest
 * first; `updatedSince`: the room's messages of both levels (tombstones included) changed after
 * that time, oldest change first.
 */
export const ListMessagesParamsSchema = Type.Object({
  ...listQueryProperties,
  threadId: Type.Optional(Id({ description: "list this thread's replies, oldest first" })),
  updatedSince: Type.Optional(
    Timestamp({
      description:
        "list the messages (both levels, deleted ones included) changed after this time, oldest change first",
    }),
  ),
});
export type ListMessagesParams = Static<typeof ListMessagesParamsSchema>;

/** `.../reactions/{emoji}`: the message and the emoji, URL-encoded. */
export const ReactionParamsSchema = Type.Object({
  roomId: Id(),
  messageId: Id(),
  emoji: Type.String({
    minLength: 1,
    maxLength: 128,
    description:
      "one Unicode emoji (URL-encoded) or a shortcode name such as tada or +1 (else 400 invalid_emoji)",
  }),
});
export type ReactionParams = Static<typeof ReactionParamsSchema>;

/** One version of a message. */
export const MessageRevisionSchema = Type.Object({
  revision: Type.Integer({ minimum: 1 }),
  content: Type.String(),
  contentFormat: ContentFormatSchema,
  /** When this version was made: the message's creation for revision 1. */
  editedAt: Timestamp({ description: "when this version was made: the creation for revision 1" }),
});
export type MessageRevision = Static<typeof MessageRevisionSchema>;

/** Every version of a message, oldest first, the current one included. */
export const MessageRevisionsSchema = Type.Object({ items: Type.Array(MessageRevisionSchema) });
export type MessageRevisions = Static<typeof MessageRevisionsSchema>;

/**
 * A message. `contentRaw`, `contentText` and `contentHtml` are present when the `accept` header
 * asks for them: `mediaType: { format: "raw+json" | "text+json" | "html+json" | "full+json" }`.
 */
export const MessageSchema = Type.Object({
  ...storedMessageProperties,
  contentRaw: Type.Optional(Type.String({ description: "raw and full: content as stored" })),
  contentText: Type.Optional(Type.String({ description: "text and full: plain text" })),
  contentHtml: Type.Optional(Type.String({ description: "html and full: sanitized HTML" })),
});
/**
 * A message. `contentRaw`, `contentText` and `contentHtml` are present when the `accept` header
 * asks for them: `mediaType: { format: "raw+json" | "text+json" | "html+json" | "full+json" }`.
 */
export type Message = Static<typeof MessageSchema>;

export const UploadedFileSchema = Type.Object({
  id: Id(),
  roomId: Id(),
  fileName: Type.String(),
  fileSize: Type.Integer(),
  fileType: Type.String(),
  sha256: Type.String({ description: "lowercase hex SHA-256 of the bytes" }),
  /** The uploader's username. */
  uploadedBy: Type.String({ description: "the uploader's username" }),
  createdAt: Timestamp(),
});
export type UploadedFile = Static<typeof UploadedFileSchema>;

export const FLAG_REVIEW_STATUSES = ["pending", "approved", "rejected"] as const;
export const FlagReviewStatusSchema = StringEnum(FLAG_REVIEW_STATUSES);
export type FlagReviewStatus = Static<typeof FlagReviewStatusSchema>;

/** A message AI moderation flagged or quarantined; `id` is `flaggedMessageId` in events. */
export const ModerationFlagSchema = Type.Object({
  id: Id({ description: "the flag's id: flaggedMessageId in moderation events" }),
  messageId: Id(),
  roomId: Id(),
  /** The room's name (null for a direct message, or a room that no longer exists). */
  roomName: Nullable(Type.String(), {
    description: "the room's name; null for a direct message or a room that no longer exists",
  }),
  /** The author: a user's id and username, null for an integration's message or a gone one. */
  authorId: Nullable(Id(), { description: "the author's user id; null for an integration" }),
  authorUsername: Nullable(Type.String(), { description: "the author's username" }),
  category: Type.String(),
  score: Type.Number(),
  band: StringEnum(["low", "medium", "high"]),
  /** What moderation did when the message was posted. */
  status: StringEnum(["FLAGGED", "QUARANTINED"]),
  reviewStatus: FlagReviewStatusSchema,
  createdAt: Timestamp(),
  reviewedAt: Nullable(Timestamp()),
  /** The reviewing admin's username. */
  reviewedBy: Nullable(Type.String(), { description: "the reviewing admin's username" }),
  /**
   * The flagged message as plain text, cut to 500 characters (ending in `…`), so the queue shows
   * what is being judged; null when the message no longer exists.
   */
  messageText: Nullable(Type.String(), {
    description:
      "the flagged message as plain text, cut to 500 characters (ending in …); null when the message no longer exists",
  }),
});
/** A message AI moderation flagged or quarantined; `id` is `flaggedMessageId` in events. */
export type ModerationFlag = Static<typeof ModerationFlagSchema>;

export const ListFlagsParamsSchema = Type.Object({
  status: Type.Optional(FlagReviewStatusSchema),
  ...listQueryProperties,
});
export type ListFlagsParams = Static<typeof ListFlagsParamsSchema>;
