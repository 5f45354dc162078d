/**
 * The server's side of the event catalogue. The events and the exact `data` each carries are
 * declared once, in `@parley/client` (the receiver-facing contract), and re-exported here for the
 * rest of the server. This module adds what only the server needs: a builder per event that copies
 * only the declared fields (so nothing else, message content above all, can leak into a payload),
 * and the description and sample of each event. Field rules: ids are integers; usernames for
 * createdBy, deletedBy, uploadedBy, adminActor and username; times ISO-8601 UTC with milliseconds.
 */
import type {
  AdminRoomDeletedData,
  AdminUserActionData,
  DeliverableEvent,
  EventDataMap,
  EventName,
  FileInfectionDetectedData,
  FileUploadedData,
  MessageCreatedData,
  MessageDeletedData,
  MessageUpdatedData,
  ModerationEventData,
  ReactionData,
  RoomCreatedData,
  RoomDeletedData,
  RoomMembershipData,
  RoomPresenceVia,
  WebhookEndpointDisabledData,
  WebhookTestData,
  WebhookVerificationData,
} from "@parley/client";

export { EVENT_NAMES, WEBHOOK_TEST, WEBHOOK_VERIFICATION, isEventName } from "@parley/client";
export type { DeliverableEvent, EventDataMap, EventName, MessageCreatedData } from "@parley/client";

export function isoTime(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

/** Builders: each takes domain values and returns exactly the documented fields. */
export const eventData = {
  messageCreated(input: {
    roomId: number;
    messageId: number;
    senderId: number | null;
    createdAt: number;
    inboundWebhookId?: number | null;
    threadId: number | null;
    mentions: readonly string[];
  }): MessageCreatedData {
    const data: MessageCreatedData = {
      roomId: input.roomId,
      messageId: input.messageId,
      senderId: input.senderId,
      timestamp: isoTime(input.createdAt),
      threadId: input.threadId,
      mentions: [...input.mentions],
    };
    if (input.inboundWebhookId != null) data.inboundWebhookId = input.inboundWebhookId;
    return data;
  },
  messageUpdated(input: {
    roomId: number;
    messageId: number;
    revision: number;
    editedBy: string;
    editedAt: number;
    mentions: readonly string[];
  }): MessageUpdatedData {
    return {
      roomId: input.roomId,
      messageId: input.messageId,
      revision: input.revision,
      editedBy: input.editedBy,
      editedAt: isoTime(input.editedAt),
      mentions: [...input.mentions],
    };
  },
  messageDeleted(input: {
    roomId: number;
    messageId: number;
    deletedBy: string;
    deletedAt: number;
    threadId: number | null;
  }): MessageDeletedData {
    return {
      roomId: input.roomId,
      messageId: input.messageId,
      deletedBy: input.deletedBy,
      deletedAt: isoTime(input.deletedAt),
      threadId: input.threadId,
    };
  },
  reaction(input: ReactionData): ReactionData {
    return {
      roomId: input.roomId,
      messageId: input.messageId,
      emoji: input.emoji,
      username: input.username,
    };
  },
  roomMembership(input: {
    roomId: number;
    username: string;
    via: RoomPresenceVia;
  }): RoomMembershipData {
    return { roomId: input.roomId, username: input.username, via: input.via };
  },
  roomCreated(input: {
    roomId: number;
    createdBy: string;
    convertedFromDm?: boolean;
  }): RoomCreatedData {
    const data: RoomCreatedData = { roomId: input.roomId, createdBy: input.createdBy };
    if (input.convertedFromDm) data.convertedFromDm = true;
    return data;
  },
  roomDeleted(input: { roomId: number; deletedBy: string }): RoomDeletedData {
    return { roomId: input.roomId, deletedBy: input.deletedBy };
  },
  fileUploaded(input: FileUploadedData): FileUploadedData {
    return {
      fileId: input.fileId,
      roomId: input.roomId,
      fileName: input.fileName,
      fileSize: input.fileSize,
      fileType: input.fileType,
      uploadedBy: input.uploadedBy,
    };
  },
  fileInfectionDetected(
    input: Omit<FileInfectionDetectedData, "scannedAt" | "action"> & { scannedAt: number },
  ): FileInfectionDetectedData {
    return {
      roomId: input.roomId,
      fileName: input.fileName,
      fileSize: input.fileSize,
      fileType: input.fileType,
      sha256: input.sha256,
      signature: input.signature,
      scanner: input.scanner,
      action: "rejected",
      uploadedBy: input.uploadedBy,
      scannedAt: isoTime(input.scannedAt),
    };
  },
  adminUserAction(input: AdminUserActionData): AdminUserActionData {
    return { username: input.username, adminActor: input.adminActor };
  },
  adminRoomDeleted(input: AdminRoomDeletedData): AdminRoomDeletedData {
    return { roomId: input.roomId, adminActor: input.adminActor };
  },
  moderation(
    input: Omit<ModerationEventData, "occurredAt" | "moderationQueueUrl"> & { occurredAt: number },
    publicBaseUrl: string | undefined,
  ): ModerationEventData {
    const data: ModerationEventData = {
      flaggedMessageId: input.flaggedMessageId,
      messageId: input.messageId,
      roomId: input.roomId,
      senderId: input.senderId,
      category: input.category,
      score: input.score,
      band: input.band,
      status: input.status,
      occurredAt: isoTime(input.occurredAt),
    };
    if (publicBaseUrl)
      data.moderationQueueUrl = `${publicBaseUrl}/admin/moderation/${input.flaggedMessageId}`;
    return data;
  },
  webhookEndpointDisabled(input: {
    webhookId: number;
    name: string;
    reason: "gone" | "auto_failing";
    disabledAt: number;
  }): WebhookEndpointDisabledData {
    return {
      webhookId: input.webhookId,
      name: input.name,
      reason: input.reason,
      disabledAt: isoTime(input.disabledAt),
    };
  },
  webhookTest(input: WebhookTestData): WebhookTestData {
    return { message: input.message, requestedBy: input.requestedBy };
  },
  webhookVerification(input: WebhookVerificationData): WebhookVerificationData {
    return { challenge: input.challenge };
  },
};

/**
 * Who hears an event: its audience, declared here once for every event and applied in one place
 * each (callers of `tx.emit` only name the event and its data).
 *
 * - `outbound`: the enabled endpoints subscribed to the event hear it (`subscribers`), or only
 *   when the room its `roomId` names is not a direct message (`subscribers-outside-dms`): a DM is
 *   private to its two members until it is promoted to a room. The fan-out's SQL predicate applies it
 *   (webhooks/outbound/delivery-engine/queue-deliveries.ts). The safety and admin events reach
 *   webhooks for a DM too: they carry no content.
 * - `stream`: what the live stream does with it (realtime/stream-frames.ts `streamAudience`): an
 *   event frame to the connections subscribed to its room (`room`; only members can subscribe,
 *   so a DM's events reach its two members), the end of the room's subscriptions without a frame
 *   (`room-end`), the end of the named user's connections (`user-end`), or nothing (`none`).
 */
export interface EventAudience {
  readonly outbound: "subscribers" | "subscribers-outside-dms";
  readonly stream: "room" | "room-end" | "user-end" | "none";
}

export const EVENT_AUDIENCE = {
  MESSAGE_CREATED: { outbound: "subscribers-outside-dms", stream: "room" },
  MESSAGE_UPDATED: { outbound: "subscribers-outside-dms", stream: "room" },
  MESSAGE_DELETED: { outbound: "subscribers-outside-dms", stream: "room" },
  REACTION_ADDED: { outbound: "subscribers-outside-dms", stream: "room" },
  REACTION_REMOVED: { outbound: "subscribers-outside-dms", stream: "room" },
  USER_JOINED_ROOM: { outbound: "subscribers-outside-dms", stream: "room" },
  USER_LEFT_ROOM: { outbound: "subscribers-outside-dms", stream: "room" },
  ROOM_CREATED: { outbound: "subscribers-outside-dms", stream: "none" },
  ROOM_DELETED: { outbound: "subscribers-outside-dms", stream: "room" },
  FILE_UPLOADED: { outbound: "subscribers-outside-dms", stream: "none" },
  FILE_INFECTION_DETECTED: { outbound: "subscribers", stream: "none" },
  ADMIN_USER_DISABLED: { outbound: "subscribers", stream: "user-end" },
  ADMIN_USER_DELETED: { outbound: "subscribers", stream: "user-end" },
  ADMIN_ROOM_DELETED: { outbound: "subscribers", stream: "room-end" },
  MESSAGE_AUTO_MODERATION_FLAGGED: { outbound: "subscribers", stream: "none" },
  MESSAGE_AUTO_MODERATION_QUARANTINED: { outbound: "subscribers", stream: "none" },
  WEBHOOK_ENDPOINT_DISABLED: { outbound: "subscribers", stream: "none" },
} as const satisfies { readonly [E in EventName]: EventAudience };

/** The events of one stream audience (`room`: those sent as event frames). */
export type EventsHeardByStream<A extends EventAudience["stream"]> = {
  [E in EventName]: (typeof EVENT_AUDIENCE)[E]["stream"] extends A ? E : never;
}[EventName];

const SAMPLE_TIME = "2026-11-22T10:00:00.000Z";
const sampleModeration: ModerationEventData = {
  flaggedMessageId: 7,
  messageId: 42,
  roomId: 3,
  senderId: 12,
  category: "harassment",
  score: 0.91,
  band: "high",
  status: "FLAGGED",
  occurredAt: SAMPLE_TIME,
  moderationQueueUrl: "https://chat.example.com/admin/moderation/7",
};

/**
 * What each event means and an example of its `data`, served by GET /api/admin/webhooks/event-types
 * so integrators can build against the catalogue without triggering every event.
 */
export const EVENT_TYPES: {
  readonly [E in DeliverableEvent]: { description: string; sample: EventDataMap[E] };
} = {
  MESSAGE_CREATED: {
    description:
      "A message was posted to a room, by a user or through an inbound webhook. Carries no content: fetch it with GET /api/rooms/{roomId}/messages/{messageId}. mentions lists the room's members it names with @username (outside code).",
    sample: {
      roomId: 3,
      messageId: 42,
      senderId: 12,
      timestamp: SAMPLE_TIME,
      threadId: null,
      mentions: ["bo"],
    },
  },
  MESSAGE_UPDATED: {
    description:
      "Its author edited a message (a new revision). Carries no content: fetch the message, or its revisions with GET /api/rooms/{roomId}/messages/{messageId}/revisions. mentions lists the room's members the new content names.",
    sample: {
      roomId: 3,
      messageId: 42,
      revision: 2,
      editedBy: "ada",
      editedAt: SAMPLE_TIME,
      mentions: [],
    },
  },
  MESSAGE_DELETED: {
    description:
      "A message was deleted by its author or an admin: its content and every revision are erased, and fetching it answers 410. threadId names its thread when it was a reply.",
    sample: { roomId: 3, messageId: 42, deletedBy: "ada", deletedAt: SAMPLE_TIME, threadId: null },
  },
  REACTION_ADDED: {
    description:
      "A member reacted to a message with an emoji (stored as its Unicode character, a shortcode such as tada as 🎉). Fires only when the reaction is new.",
    sample: { roomId: 3, messageId: 42, emoji: "🎉", username: "ada" },
  },
  REACTION_REMOVED: {
    description:
      "A member took back their reaction to a message. Fires only when the reaction was there.",
    sample: { roomId: 3, messageId: 42, emoji: "🎉", username: "ada" },
  },
  USER_JOINED_ROOM: {
    description:
      "A user joined a room: as a member (via membership), by becoming present (via presence) or by joining its call (via call).",
    sample: { roomId: 3, username: "ada", via: "membership" },
  },
  USER_LEFT_ROOM: {
    description: "A user left a room, its presence or its call (see via).",
    sample: { roomId: 3, username: "ada", via: "membership" },
  },
  ROOM_CREATED: {
    description:
      "A room was created, or a direct-message conversation was promoted to one (convertedFromDm: true).",
    sample: { roomId: 3, createdBy: "ada" },
  },
  ROOM_DELETED: {
    description: "A room was deleted by its creator.",
    sample: { roomId: 3, deletedBy: "ada" },
  },
  FILE_UPLOADED: {
    description: "A file was uploaded to a room and passed the antivirus scan.",
    sample: {
      fileId: 5,
      roomId: 3,
      fileName: "report.pdf",
      fileSize: 48213,
      fileType: "application/pdf",
      uploadedBy: "ada",
    },
  },
  FILE_INFECTION_DETECTED: {
    description: "The antivirus scanner flagged an upload; the file was rejected, never stored.",
    sample: {
      roomId: 3,
      fileName: "invoice.exe",
      fileSize: 68,
      fileType: "application/octet-stream",
      sha256: "275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f",
      signature: "EICAR-Test-File",
      scanner: "builtin",
      action: "rejected",
      uploadedBy: "ada",
      scannedAt: SAMPLE_TIME,
    },
  },
  ADMIN_USER_DISABLED: {
    description: "An admin disabled a user account; its tokens stop working.",
    sample: { username: "mallory", adminActor: "admin" },
  },
  ADMIN_USER_DELETED: {
    description: "An admin deleted a user account.",
    sample: { username: "mallory", adminActor: "admin" },
  },
  ADMIN_ROOM_DELETED: {
    description: "An admin deleted a room.",
    sample: { roomId: 3, adminActor: "admin" },
  },
  MESSAGE_AUTO_MODERATION_FLAGGED: {
    description: "AI moderation flagged a message for review; it stays visible.",
    sample: sampleModeration,
  },
  MESSAGE_AUTO_MODERATION_QUARANTINED: {
    description: "AI moderation quarantined a message: hidden until an admin reviews it.",
    sample: { ...sampleModeration, status: "QUARANTINED" },
  },
  WEBHOOK_ENDPOINT_DISABLED: {
    description:
      "Parley disabled another outbound endpoint: it answered 410 Gone (reason gone) or kept failing (reason auto_failing). Its queued deliveries are held until an admin enables it again.",
    sample: { webhookId: 4, name: "Audit sink", reason: "auto_failing", disabledAt: SAMPLE_TIME },
  },
  WEBHOOK_TEST: {
    description:
      "Sent only by POST /api/admin/webhooks/{id}/test, to that endpoint alone; cannot be subscribed to.",
    sample: { message: "Test delivery from Parley", requestedBy: "admin" },
  },
  WEBHOOK_VERIFICATION: {
    description:
      'The ownership check (PARLEY_WEBHOOK_VERIFY_OWNERSHIP): sent to a new endpoint, or one whose url changed, and by POST /api/admin/webhooks/{id}/verify. Answer 2xx with the challenge as the body (or {"challenge": ...}); until then the endpoint gets nothing else. Cannot be subscribed to.',
    sample: { challenge: "n6Xq0cJbW1fS3Zt8yVh2kLmPq4rT7uAe" },
  },
};
