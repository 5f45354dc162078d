import { describe, expect, it } from "vitest";
import { buildEnvelope, envelopeAround } from "../../../src/events/build-envelope.js";
import {
  EVENT_NAMES,
  EVENT_TYPES,
  eventData,
  isEventName,
  WEBHOOK_TEST,
} from "../../../src/events/event-catalogue.js";

const T = Date.UTC(2026, 10, 22, 10, 0, 0, 0);

describe("event catalogue", () => {
  // The names and data types are the client's (@parley/client); event-catalogue.test-d.ts checks
  // that each builder returns exactly the client's type.
  it("describes every subscribable event, in the documented order, then WEBHOOK_TEST and WEBHOOK_VERIFICATION", () => {
    expect(Object.keys(EVENT_TYPES)).toEqual([
      ...EVENT_NAMES,
      WEBHOOK_TEST,
      "WEBHOOK_VERIFICATION",
    ]);
    expect(isEventName("WEBHOOK_TEST")).toBe(false);
    expect(isEventName("WEBHOOK_VERIFICATION")).toBe(false);
    expect(isEventName("MESSAGE_CREATED")).toBe(true);
  });

  it("builds MESSAGE_CREATED with exactly its fields, and inboundWebhookId only for integrations", () => {
    const fromUser = eventData.messageCreated({
      roomId: 1,
      messageId: 2,
      senderId: 3,
      createdAt: T,
      inboundWebhookId: null,
      threadId: null,
      mentions: ["bo"],
    });
    expect(fromUser).toEqual({
      roomId: 1,
      messageId: 2,
      senderId: 3,
      timestamp: "2026-11-22T10:00:00.000Z",
      threadId: null,
      mentions: ["bo"],
    });
    const fromHook = eventData.messageCreated({
      roomId: 1,
      messageId: 2,
      senderId: null,
      createdAt: T,
      inboundWebhookId: 9,
      threadId: 7,
      mentions: [],
    });
    expect(fromHook).toEqual({
      roomId: 1,
      messageId: 2,
      senderId: null,
      timestamp: "2026-11-22T10:00:00.000Z",
      threadId: 7,
      mentions: [],
      inboundWebhookId: 9,
    });
  });

  it("builds MESSAGE_UPDATED and MESSAGE_DELETED with exactly their fields", () => {
    expect(
      eventData.messageUpdated({
        roomId: 1,
        messageId: 2,
        revision: 3,
        editedBy: "ada",
        editedAt: T,
        mentions: ["bo"],
        content: "secret plans",
      } as Parameters<typeof eventData.messageUpdated>[0]),
    ).toEqual({
      roomId: 1,
      messageId: 2,
      revision: 3,
      editedBy: "ada",
      editedAt: "2026-11-22T10:00:00.000Z",
      mentions: ["bo"],
    });
    expect(
      eventData.messageDeleted({
        roomId: 1,
        messageId: 2,
        deletedBy: "admin",
        deletedAt: T,
        threadId: null,
      }),
    ).toEqual({
      roomId: 1,
      messageId: 2,
      deletedBy: "admin",
      deletedAt: "2026-11-22T10:00:00.000Z",
      threadId: null,
    });
  });

  it("builds REACTION_ADDED and REACTION_REMOVED data with exactly their fields", () => {
    expect(
      eventData.reaction({
        roomId: 1,
        messageId: 2,
        emoji: "🎉",
        username: "ada",
        content: "secret plans",
      } as Parameters<typeof eventData.reaction>[0]),
    ).toEqual({ roomId: 1, messageId: 2, emoji: "🎉", username: "ada" });
  });

  it("copies only documented fields, so extra input (such as content) never reaches a payload", () => {
    const input = {
      roomId: 1,
      messageId: 2,
      senderId: 3,
      createdAt: T,
      threadId: null,
      mentions: [],
      content: "secret plans",
    } as Parameters<typeof eventData.messageCreated>[0];
    expect(JSON.stringify(eventData.messageCreated(input))).not.toContain("secret plans");
  });

  it("marks promoted DMs with convertedFromDm: true and omits it otherwise", () => {
    expect(eventData.roomCreated({ roomId: 4, createdBy: "alice" })).toEqual({
      roomId: 4,
      createdBy: "alice",
    });
    expect(eventData.roomCreated({ roomId: 4, createdBy: "alice", convertedFromDm: true })).toEqual(
      {
        roomId: 4,
        createdBy: "alice",
        convertedFromDm: true,
      },
    );
  });

  it("builds FILE_INFECTION_DETECTED with the scan fields and an ISO scannedAt", () => {
    expect(
      eventData.fileInfectionDetected({
        roomId: 1,
        fileName: "eicar.com",
        fileSize: 68,
        fileType: "application/octet-stream",
        sha256: "a".repeat(64),
        signature: "EICAR-Test-File",
        scanner: "builtin",
        uploadedBy: "bob",
        scannedAt: T,
      }),
    ).toEqual({
      roomId: 1,
      fileName: "eicar.com",
      fileSize: 68,
      fileType: "application/octet-stream",
      sha256: "a".repeat(64),
      signature: "EICAR-Test-File",
      scanner: "builtin",
      action: "rejected",
      uploadedBy: "bob",
      scannedAt: "2026-11-22T10:00:00.000Z",
    });
  });

  it("adds moderationQueueUrl to moderation events only when a public base URL is set", () => {
    const input = {
      flaggedMessageId: 7,
      messageId: 8,
      roomId: 1,
      senderId: 3,
      category: "harassment",
      score: 0.91,
      band: "high" as const,
      status: "QUARANTINED" as const,
      occurredAt: T,
    };
    expect(eventData.moderation(input, undefined)).not.toHaveProperty("moderationQueueUrl");
    expect(eventData.moderation(input, "https://chat.example.com").moderationQueueUrl).toBe(
      "https://chat.example.com/admin/moderation/7",
    );
    expect(eventData.moderation(input, undefined).occurredAt).toBe("2026-11-22T10:00:00.000Z");
  });

  it("freezes the envelope as compact JSON with the enqueue timestamp", () => {
    const body = buildEnvelope("ADMIN_USER_DISABLED", T, 12, {
      username: "bob",
      adminActor: "admin",
    });
    expect(body).toBe(
      '{"event":"ADMIN_USER_DISABLED","timestamp":"2026-11-22T10:00:00.000Z","webhookId":12,"data":{"username":"bob","adminActor":"admin"}}',
    );
  });

  it("splits the envelope around webhookId so that prefix + id + suffix is the whole body", () => {
    const samples = [
      eventData.messageCreated({
        roomId: 3,
        messageId: 99,
        senderId: null,
        createdAt: T,
        inboundWebhookId: 5,
        threadId: null,
        mentions: [],
      }),
      // Non-ASCII, quotes and a backslash: escaped the same way whichever way the body is built.
      { username: 'zoë "the" \\ admin ✓', adminActor: "admin" },
    ];
    for (const data of samples) {
      const { prefix, suffix } = envelopeAround("ADMIN_USER_DISABLED", T, data as never);
      for (const id of [1, 12, 9_007_199_254_740_991]) {
        expect(prefix + String(id) + suffix).toBe(
          buildEnvelope("ADMIN_USER_DISABLED", T, id, data as never),
        );
      }
    }
  });
});
