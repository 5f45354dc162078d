/**
 * The receiver-facing contract: every event Parley delivers and the exact `data` each carries.
 * Declared here only: the server imports these names and types for its event catalogue, whose
 * builders are type-checked to return exactly each `...Data` type.
 * Ids are integers; `createdBy`, `deletedBy`, `uploadedBy`, `adminActor` and `username` are
 * usernames; times are ISO-8601 UTC with milliseconds. No payload ever carries message content:
 * fetch it with `GET /api/rooms/{roomId}/messages/{messageId}` (admin or bot token).
 */

/** Every event an endpoint can subscribe to, in the order Parley documents them. */
export const EVENT_NAMES = [
  "MESSAGE_CREATED",
  "MESSAGE_UPDATED",
  "MESSAGE_DELETED",
  "REACTION_ADDED",
  "REACTION_REMOVED",
  "USER_JOINED_ROOM",
  "USER_LEFT_ROOM",
  "ROOM_CREATED",
  "ROOM_DELETED",
  "FILE_UPLOADED",
  "FILE_INFECTION_DETECTED",
  "ADMIN_USER_DISABLED",
  "ADMIN_USER_DELETED",
  "ADMIN_ROOM_DELETED",
  "MESSAGE_AUTO_MODERATION_FLAGGED",
  "MESSAGE_AUTO_MODERATION_QUARANTINED",
  "WEBHOOK_ENDPOINT_DISABLED",
] as const;

/** An event an endpoint can subscribe to. */
export type EventName = (typeof EVENT_NAMES)[number];

/** Sent only by `POST /api/admin/webhooks/{id}/test`, to that endpoint alone; not subscribable. */
export const WEBHOOK_TEST = "WEBHOOK_TEST";

/**
 * Sent only to an endpoint waiting for the ownership check (PARLEY_WEBHOOK_VERIFY_OWNERSHIP), or
 * by `POST /api/admin/webhooks/{id}/verify`: answer 2xx with its `data.challenge` in the body.
 */
export const WEBHOOK_VERIFICATION = "WEBHOOK_VERIFICATION";

/** Every value the envelope's `event` can take. */
export type DeliverableEvent = EventName | typeof WEBHOOK_TEST | typeof WEBHOOK_VERIFICATION;

export interface MessageCreatedData {
  roomId: number;
  messageId: number;
  /** The sending user's id; null for a message posted through an inbound webhook. */
  senderId: number | null;
  timestamp: string;
  /** Present only for a message posted through an inbound webhook. */
  inboundWebhookId?: number;
  /** The thread's top-level message for a reply; null at top level. */
  threadId: number | null;
  /** Usernames of the room's members the content mentions (`@name`, outside code; empty when none). */
  mentions: string[];
}

/** Its author edited a message: fetch it for the new content. */
export interface MessageUpdatedData {
  roomId: number;
  messageId: number;
  /** The new revision (the original is 1). */
  revision: number;
  /** The author's username. */
  editedBy: string;
  editedAt: string;
  /** Usernames mentioned in the new content (empty when none). */
  mentions: string[];
}

/** A message was deleted by its author or an admin: its content and revisions are gone. */
export interface MessageDeletedData {
  roomId: number;
  messageId: number;
  /** The username of who deleted it. */
  deletedBy: string;
  deletedAt: string;
  /** The thread's top-level message when it was a reply; null at top level. */
  threadId: number | null;
}

/** A member added (REACTION_ADDED) or took back (REACTION_REMOVED) a reaction to a message. */
export interface ReactionData {
  roomId: number;
  messageId: number;
  /** The emoji as one Unicode character (a shortcode such as `tada` is stored as 🎉). */
  emoji: string;
  /** The member's username. */
  username: string;
}

/**
 * How the user joined or left: as a member (`POST .../join`, `.../leave`), by being present on the
 * live stream, or by joining or leaving the room's call.
 */
export type RoomPresenceVia = "membership" | "presence" | "call";

export interface RoomMembershipData {
  roomId: number;
  username: string;
  via: RoomPresenceVia;
}

export interface RoomCreatedData {
  roomId: number;
  createdBy: string;
  /** Present (and true) only when a direct-message conversation was promoted to a room. */
  convertedFromDm?: true;
}

export interface RoomDeletedData {
  roomId: number;
  deletedBy: string;
}

export interface FileUploadedData {
  fileId: number;
  roomId: number;
  fileName: string;
  fileSize: number;
  fileType: string;
  uploadedBy: string;
}

export interface FileInfectionDetectedData {
  roomId: number;
  fileName: string;
  fileSize: number;
  fileType: string;
  sha256: string;
  signature: string;
  scanner: string;
  /** What Parley did with the file: it is never stored. */
  action: "rejected";
  uploadedBy: string;
  scannedAt: string;
}

export interface AdminUserActionData {
  username: string;
  adminActor: string;
}

export interface AdminRoomDeletedData {
  roomId: number;
  adminActor: string;
}

export interface ModerationEventData {
  /** The moderation flag's id. */
  flaggedMessageId: number;
  messageId: number;
  roomId: number;
  senderId: number | null;
  category: string;
  score: number;
  band: "low" | "medium" | "high";
  status: "FLAGGED" | "QUARANTINED";
  occurredAt: string;
  /** Present only when the server has `PARLEY_PUBLIC_BASE_URL` set. */
  moderationQueueUrl?: string;
}

/** Parley disabled another outbound endpoint (410 Gone, or a long run of failures). */
export interface WebhookEndpointDisabledData {
  webhookId: number;
  name: string;
  reason: "gone" | "auto_failing";
  disabledAt: string;
}

export interface WebhookTestData {
  message: string;
  requestedBy: string;
}

/** The ownership check: answer 2xx with `challenge` as the body, or `{"challenge": ...}`. */
export interface WebhookVerificationData {
  challenge: string;
}

/** The `data` type of each event. */
export interface EventDataMap {
  MESSAGE_CREATED: MessageCreatedData;
  MESSAGE_UPDATED: MessageUpdatedData;
  MESSAGE_DELETED: MessageDeletedData;
  REACTION_ADDED: ReactionData;
  REACTION_REMOVED: ReactionData;
  USER_JOINED_ROOM: RoomMembershipData;
  USER_LEFT_ROOM: RoomMembershipData;
  ROOM_CREATED: RoomCreatedData;
  ROOM_DELETED: RoomDeletedData;
  FILE_UPLOADED: FileUploadedData;
  FILE_INFECTION_DETECTED: FileInfectionDetectedData;
  ADMIN_USER_DISABLED: AdminUserActionData;
  ADMIN_USER_DELETED: AdminUserActionData;
  ADMIN_ROOM_DELETED: AdminRoomDeletedData;
  MESSAGE_AUTO_MODERATION_FLAGGED: ModerationEventData;
  MESSAGE_AUTO_MODERATION_QUARANTINED: ModerationEventData;
  WEBHOOK_ENDPOINT_DISABLED: WebhookEndpointDisabledData;
  WEBHOOK_TEST: WebhookTestData;
  WEBHOOK_VERIFICATION: WebhookVerificationData;
}

/** The body of one delivery for event `E`. */
export interface WebhookEnvelope<E extends DeliverableEvent = DeliverableEvent> {
  event: E;
  /** When the delivery was queued (ISO-8601); may differ from when the action happened. */
  timestamp: string;
  /** The endpoint's id. */
  webhookId: number;
  data: EventDataMap[E];
}

/**
 * Any delivery, as a union discriminated by `event`: checking `event.event === "MESSAGE_CREATED"`
 * narrows `event.data` to `MessageCreatedData`.
 */
export type WebhookEvent = { [E in DeliverableEvent]: WebhookEnvelope<E> }[DeliverableEvent];

/** True for a name an endpoint can subscribe to. */
export function isEventName(value: unknown): value is EventName {
  return typeof value === "string" && (EVENT_NAMES as readonly string[]).includes(value);
}
