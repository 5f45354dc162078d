import { WebhookPayloadError } from "../errors/webhook-payload-error.js";
import type { DeliverableEvent, WebhookEvent } from "../types/events.js";
import { EVENT_NAMES, WEBHOOK_TEST, WEBHOOK_VERIFICATION } from "../types/events.js";
import { type RawBody, toBytes } from "./raw-body.js";

/** `?` marks a field that may be absent. */
type FieldKind =
  "integer" | "integer|null" | "number" | "string" | "strings" | "true" | `${string}?`;

/** The fields each event's `data` must carry (the server's event catalogue); extra ones are kept. */
const DATA_FIELDS: { readonly [E in DeliverableEvent]: Readonly<Record<string, FieldKind>> } = {
  MESSAGE_CREATED: {
    roomId: "integer",
    messageId: "integer",
    senderId: "integer|null",
    timestamp: "string",
    inboundWebhookId: "integer?",
    // Always sent since threads; a delivery queued by an older server, retried now, has none.
    threadId: "integer|null?",
    // Always sent since mentions; a delivery queued by an older server, retried now, has none.
    mentions: "strings?",
  },
  MESSAGE_UPDATED: {
    roomId: "integer",
    messageId: "integer",
    revision: "integer",
    editedBy: "string",
    editedAt: "string",
    mentions: "strings",
  },
  MESSAGE_DELETED: {
    roomId: "integer",
    messageId: "integer",
    deletedBy: "string",
    deletedAt: "string",
    threadId: "integer|null",
  },
  REACTION_ADDED: { roomId: "integer", messageId: "integer", emoji: "string", username: "string" },
  REACTION_REMOVED: {
    roomId: "integer",
    messageId: "integer",
    emoji: "string",
    username: "string",
  },
  USER_JOINED_ROOM: { roomId: "integer", username: "string", via: "string" },
  USER_LEFT_ROOM: { roomId: "integer", username: "string", via: "string" },
  ROOM_CREATED: { roomId: "integer", createdBy: "string", convertedFromDm: "true?" },
  ROOM_DELETED: { roomId: "integer", deletedBy: "string" },
  FILE_UPLOADED: {
    fileId: "integer",
    roomId: "integer",
    fileName: "string",
    fileSize: "integer",
    fileType: "string",
    uploadedBy: "string",
  },
  FILE_INFECTION_DETECTED: {
    roomId: "integer",
    fileName: "string",
    fileSize: "integer",
    fileType: "string",
    sha256: "string",
    signature: "string",
    scanner: "string",
    action: "string",
    uploadedBy: "string",
    scannedAt: "string",
  },
  ADMIN_USER_DISABLED: { username: "string", adminActor: "string" },
  ADMIN_USER_DELETED: { username: "string", adminActor: "string" },
  ADMIN_ROOM_DELETED: { roomId: "integer", adminActor: "string" },
  MESSAGE_AUTO_MODERATION_FLAGGED: moderationFields(),
  MESSAGE_AUTO_MODERATION_QUARANTINED: moderationFields(),
  WEBHOOK_ENDPOINT_DISABLED: {
    webhookId: "integer",
    name: "string",
    reason: "string",
    disabledAt: "string",
  },
  WEBHOOK_TEST: { message: "string", requestedBy: "string" },
  WEBHOOK_VERIFICATION: { challenge: "string" },
};

function moderationFields(): Record<string, FieldKind> {
  return {
    flaggedMessageId: "integer",
    messageId: "integer",
    roomId: "integer",
    senderId: "integer|null",
    category: "string",
    score: "number",
    band: "string",
    status: "string",
    occurredAt: "string",
    moderationQueueUrl: "string?",
  };
}

const DELIVERABLE: ReadonlySet<string> = new Set([
  ...EVENT_NAMES,
  WEBHOOK_TEST,
  WEBHOOK_VERIFICATION,
]);
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The delivery in `rawBody` as a typed event, after checking it is a Parley envelope
 * `{event, timestamp, webhookId, data}` whose `data` has the fields its event promises. Throws
 * `WebhookPayloadError` otherwise (unknown event names included: a receiver cannot have
 * subscribed to an event this library does not know). Verify the signature first.
 *
 *   const event = parseWebhookEvent(rawBody);
 *   if (event.event === "MESSAGE_CREATED") event.data.messageId; // typed
 */
export function parseWebhookEvent(rawBody: RawBody): WebhookEvent {
  let value: unknown;
  try {
    value = JSON.parse(UTF8.decode(toBytes(rawBody)));
  } catch (error) {
    throw new WebhookPayloadError("the body is not UTF-8 JSON", undefined, { cause: error });
  }
  if (!isObject(value)) throw new WebhookPayloadError("the body is not a JSON object");

  const { event, timestamp, webhookId, data } = value;
  if (typeof event !== "string") throw new WebhookPayloadError("event must be a string", "event");
  if (!DELIVERABLE.has(event)) {
    throw new WebhookPayloadError(`event "${event}" is not a Parley event`, "event");
  }
  if (typeof timestamp !== "string" || Number.isNaN(Date.parse(timestamp))) {
    throw new WebhookPayloadError("timestamp must be an ISO-8601 time", "timestamp");
  }
  if (!Number.isSafeInteger(webhookId)) {
    throw new WebhookPayloadError("webhookId must be an integer", "webhookId");
  }
  if (!isObject(data)) throw new WebhookPayloadError("data must be an object", "data");

  for (const [field, kind] of Object.entries(DATA_FIELDS[event as DeliverableEvent])) {
    const optional = kind.endsWith("?");
    const present = Object.hasOwn(data, field);
    if (!present && optional) continue;
    if (!present) throw new WebhookPayloadError(`${event} data has no ${field}`, `data.${field}`);
    const expected = (optional ? kind.slice(0, -1) : kind) as FieldKind;
    if (!matches(data[field], expected)) {
      throw new WebhookPayloadError(`${event} data.${field} must be ${expected}`, `data.${field}`);
    }
  }
  return value as unknown as WebhookEvent;
}

function matches(value: unknown, kind: FieldKind): boolean {
  switch (kind) {
    case "integer":
      return Number.isSafeInteger(value);
    case "integer|null":
      return value === null || Number.isSafeInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "string":
      return typeof value === "string";
    case "strings":
      return Array.isArray(value) && value.every((item) => typeof item === "string");
    case "true":
      return value === true;
    default:
      return false;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
