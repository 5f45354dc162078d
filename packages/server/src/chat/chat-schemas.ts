import { timestamp } from "../http/schemas.js";

/** Path parameters of the chat routes: ids are positive integers (anything else answers 400). */
export function idParamsOf<const K extends string>(...names: K[]) {
  return {
    type: "object",
    properties: Object.fromEntries(
      names.map((name) => [name, { type: "integer", minimum: 1 }]),
    ) as Record<K, { type: "integer"; minimum: 1 }>,
    required: names,
  } as const;
}

export const roomSchema = {
  type: "object",
  properties: {
    id: { type: "integer" },
    name: {
      type: ["string", "null"],
      description: "null for a direct message that was not promoted",
    },
    kind: { type: "string", enum: ["room", "dm"] },
    createdBy: { type: "string", description: "the creator's username" },
    createdAt: timestamp,
    memberCount: { type: "integer" },
  },
  required: ["id", "name", "kind", "createdBy", "createdAt", "memberCount"],
} as const;

export const messageSchema = {
  type: "object",
  properties: {
    id: { type: "integer" },
    roomId: { type: "integer" },
    content: { type: "string", description: "as stored: markdown, or HTML sanitized on write" },
    contentFormat: { type: "string", enum: ["markdown", "html"] },
    sender: {
      type: "object",
      properties: {
        type: { type: "string", enum: ["user", "integration"] },
        id: { type: "integer", description: "the user's id, or the inbound webhook's id" },
        username: { type: ["string", "null"], description: "null for an integration" },
        displayName: { type: "string" },
        avatarUrl: { type: ["string", "null"], description: "null for a user" },
      },
      required: ["type", "id", "username", "displayName", "avatarUrl"],
    },
    inboundWebhookId: { type: ["integer", "null"] },
    moderationStatus: {
      type: "string",
      enum: ["none", "FLAGGED", "QUARANTINED", "APPROVED", "REJECTED"],
    },
    createdAt: timestamp,
  },
  required: [
    "id",
    "roomId",
    "content",
    "contentFormat",
    "sender",
    "inboundWebhookId",
    "moderationStatus",
    "createdAt",
  ],
} as const;
