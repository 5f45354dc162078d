import { describe, expect, it } from "vitest";
import { EVENT_NAMES, WebhookPayloadError, parseWebhookEvent } from "../src/index.js";

const envelope = (event: string, data: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ event, timestamp: "2026-11-22T10:00:00.000Z", webhookId: 7, data, ...extra });

const MESSAGE = {
  roomId: 12,
  messageId: 345,
  senderId: 3,
  timestamp: "2026-11-22T09:59:59.874Z",
  threadId: null,
  mentions: ["bob"],
};

describe("parseWebhookEvent", () => {
  it("parses an envelope from a string or bytes", () => {
    const event = parseWebhookEvent(envelope("MESSAGE_CREATED", MESSAGE));
    expect(event).toEqual({
      event: "MESSAGE_CREATED",
      timestamp: "2026-11-22T10:00:00.000Z",
      webhookId: 7,
      data: MESSAGE,
    });
    expect(parseWebhookEvent(Buffer.from(envelope("MESSAGE_CREATED", MESSAGE)))).toEqual(event);
  });

  it("accepts every event's documented data, optional fields absent or present", () => {
    const samples: Record<string, unknown> = {
      MESSAGE_CREATED: { ...MESSAGE, senderId: null, inboundWebhookId: 4, threadId: 340 },
      MESSAGE_UPDATED: {
        roomId: 12,
        messageId: 345,
        revision: 2,
        editedBy: "ann",
        editedAt: "2026-11-22T10:00:00.000Z",
        mentions: ["bob"],
      },
      MESSAGE_DELETED: {
        roomId: 12,
        messageId: 345,
        deletedBy: "admin",
        deletedAt: "2026-11-22T10:00:00.000Z",
        threadId: null,
      },
      REACTION_ADDED: { roomId: 12, messageId: 345, emoji: "🎉", username: "ann" },
      REACTION_REMOVED: { roomId: 12, messageId: 345, emoji: "👍", username: "ann" },
      USER_JOINED_ROOM: { roomId: 1, username: "ann", via: "membership" },
      USER_LEFT_ROOM: { roomId: 1, username: "ann", via: "presence" },
      ROOM_CREATED: { roomId: 1, createdBy: "ann", convertedFromDm: true },
      ROOM_DELETED: { roomId: 1, deletedBy: "ann" },
      FILE_UPLOADED: {
        fileId: 1,
        roomId: 1,
        fileName: "a.txt",
        fileSize: 5,
        fileType: "text/plain",
        uploadedBy: "ann",
      },
      FILE_INFECTION_DETECTED: {
        roomId: 1,
        fileName: "eicar.com",
        fileSize: 68,
        fileType: "application/octet-stream",
        sha256: "275a021b",
        signature: "EICAR-Test-File",
        scanner: "builtin",
        action: "rejected",
        uploadedBy: "ann",
        scannedAt: "2026-11-22T10:00:00.000Z",
      },
      ADMIN_USER_DISABLED: { username: "bob", adminActor: "admin" },
      ADMIN_USER_DELETED: { username: "bob", adminActor: "admin" },
      ADMIN_ROOM_DELETED: { roomId: 1, adminActor: "admin" },
      MESSAGE_AUTO_MODERATION_FLAGGED: {
        flaggedMessageId: 2,
        messageId: 3,
        roomId: 1,
        senderId: 4,
        category: "harassment",
        score: 0.71,
        band: "medium",
        status: "FLAGGED",
        occurredAt: "2026-11-22T10:00:00.000Z",
      },
      MESSAGE_AUTO_MODERATION_QUARANTINED: {
        flaggedMessageId: 2,
        messageId: 3,
        roomId: 1,
        senderId: null,
        category: "harassment",
        score: 0.97,
        band: "high",
        status: "QUARANTINED",
        occurredAt: "2026-11-22T10:00:00.000Z",
        moderationQueueUrl: "https://chat.example.com/admin/moderation/2",
      },
      WEBHOOK_ENDPOINT_DISABLED: {
        webhookId: 4,
        name: "Audit sink",
        reason: "gone",
        disabledAt: "2026-11-22T10:00:00.000Z",
      },
      WEBHOOK_TEST: { message: "hello", requestedBy: "admin" },
    };
    expect(Object.keys(samples)).toEqual([...EVENT_NAMES, "WEBHOOK_TEST"]);
    for (const [name, data] of Object.entries(samples)) {
      expect(parseWebhookEvent(envelope(name, data)).data).toEqual(data);
    }
  });

  it("accepts a MESSAGE_CREATED queued by a server before threads, without threadId", () => {
    const { threadId: _threadId, mentions: _mentions, ...older } = MESSAGE;
    expect(parseWebhookEvent(envelope("MESSAGE_CREATED", older)).data).toEqual(older);
  });

  it("refuses MESSAGE_CREATED whose mentions are not a list of usernames", () => {
    expect(() =>
      parseWebhookEvent(envelope("MESSAGE_CREATED", { ...MESSAGE, mentions: [3] })),
    ).toThrow(WebhookPayloadError);
  });

  it("refuses MESSAGE_UPDATED whose mentions are not a list of usernames", () => {
    const data = {
      roomId: 1,
      messageId: 2,
      revision: 2,
      editedBy: "ann",
      editedAt: "2026-11-22T10:00:00.000Z",
      mentions: "bob",
    };
    expect(() => parseWebhookEvent(envelope("MESSAGE_UPDATED", data))).toThrow(WebhookPayloadError);
  });

  it("keeps fields a newer server adds", () => {
    const event = parseWebhookEvent(
      envelope("USER_LEFT_ROOM", { roomId: 1, username: "a", via: "call", x: 1 }),
    );
    expect(event.data).toMatchObject({ x: 1 });
  });

  it.each([
    ["not JSON", "{event:", undefined],
    ["not UTF-8", Buffer.from([0x7b, 0xff, 0x7d]), undefined],
    ["an array", "[]", undefined],
    ["null", "null", undefined],
    [
      "without event",
      JSON.stringify({ timestamp: "2026-11-22T10:00:00.000Z", webhookId: 1, data: {} }),
      "event",
    ],
    ["an unknown event", envelope("MESSAGE_EXPLODED", {}), "event"],
    [
      "a bad timestamp",
      envelope(
        "USER_LEFT_ROOM",
        { roomId: 1, username: "a", via: "call" },
        { timestamp: "yesterday" },
      ),
      "timestamp",
    ],
    [
      "a string webhookId",
      envelope("USER_LEFT_ROOM", { roomId: 1, username: "a", via: "call" }, { webhookId: "7" }),
      "webhookId",
    ],
    [
      "a fractional webhookId",
      envelope("USER_LEFT_ROOM", { roomId: 1, username: "a", via: "call" }, { webhookId: 1.5 }),
      "webhookId",
    ],
    ["data that is an array", envelope("USER_LEFT_ROOM", []), "data"],
    [
      "data missing a field",
      envelope("MESSAGE_CREATED", { ...MESSAGE, messageId: undefined }),
      "data.messageId",
    ],
    [
      "a string id in data",
      envelope("MESSAGE_CREATED", { ...MESSAGE, roomId: "12" }),
      "data.roomId",
    ],
    [
      "convertedFromDm false",
      envelope("ROOM_CREATED", { roomId: 1, createdBy: "a", convertedFromDm: false }),
      "data.convertedFromDm",
    ],
  ])("rejects a body that is %s with WebhookPayloadError", (_label, body, path) => {
    let caught: unknown;
    try {
      parseWebhookEvent(body);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(WebhookPayloadError);
    expect((caught as WebhookPayloadError).path).toBe(path);
  });
});
