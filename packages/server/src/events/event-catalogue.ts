/**
 * The event catalogue: every event type Parley emits, the exact `data` fields each carries, and a
 * builder per event that copies only those fields (so nothing else, message content above all,
 * can leak into a payload). Field rules: ids are integers; usernames for createdBy, deletedBy,
 * uploadedBy, adminActor and username; times ISO-8601 UTC with milliseconds.
 */

export const EVENT_NAMES = [
  "MESSAGE_CREATED",
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
] as const;

/** An event an endpoint can subscribe to. */
export type EventName = (typeof EVENT_NAMES)[number];

/** Sent only by POST /api/admin/webhooks/{id}/test, to that endpoint alone; not subscribable. */
export const WEBHOOK_TEST = "WEBHOOK_TEST" as const;
export type DeliverableEvent = EventName | typeof WEBHOOK_TEST;

export interface MessageCreatedData {
  roomId: number;
  messageId: number;
  /** The sending user's id; null for a message posted through an inbound webhook. */
  senderId: number | null;
  timestamp: string;
  /** Present only for a message posted through an inbound webhook. */
  inboundWebhookId?: number;
}
export interface RoomMembershipData {
  roomId: number;
  username: string;
}
export interface RoomCreatedData {
  roomId: number;
  createdBy: string;
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
  flaggedMessageId: number;
  messageId: number;
  roomId: number;
  senderId: number | null;
  category: string;
  score: number;
  band: "low" | "medium" | "high";
  status: "FLAGGED" | "QUARANTINED";
  occurredAt: string;
  moderationQueueUrl?: string;
}
export interface WebhookTestData {
  message: string;
  requestedBy: string;
}

export interface EventDataMap {
  MESSAGE_CREATED: MessageCreatedData;
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
  WEBHOOK_TEST: WebhookTestData;
}

export function isEventName(value: unknown): value is EventName {
  return typeof value === "string" && (EVENT_NAMES as readonly string[]).includes(value);
}

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
  }): MessageCreatedData {
    const data: MessageCreatedData = {
      roomId: input.roomId,
      messageId: input.messageId,
      senderId: input.senderId,
      timestamp: isoTime(input.createdAt),
    };
    if (input.inboundWebhookId != null) data.inboundWebhookId = input.inboundWebhookId;
    return data;
  },
  roomMembership(input: { roomId: number; username: string }): RoomMembershipData {
    return { roomId: input.roomId, username: input.username };
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
  webhookTest(input: WebhookTestData): WebhookTestData {
    return { message: input.message, requestedBy: input.requestedBy };
  },
};
