/**
 * The frames of Parley's live stream (`GET /api/stream`, subprotocol `parley.v1`), as
 * docs/realtime.md describes them.
 */
import type {
  MessageCreatedData,
  MessageDeletedData,
  MessageUpdatedData,
  ReactionData,
  RoomDeletedData,
  RoomMembershipData,
} from "./events.js";

/** The message object of a MESSAGE_CREATED or MESSAGE_UPDATED frame: `.full+json`. */
export interface StreamMessage {
  id: number;
  roomId: number;
  content: string;
  contentFormat: "markdown" | "html";
  sender: {
    type: "user" | "integration";
    id: number;
    username: string | null;
    displayName: string;
    avatarUrl: string | null;
  };
  inboundWebhookId: number | null;
  moderationStatus: string;
  createdAt: string;
  threadId: number | null;
  replyCount: number;
  lastReplyAt: string | null;
  revision: number;
  editedAt: string | null;
  updatedAt: string;
  reactions: Array<{ emoji: string; count: number; usernames: string[] }>;
  contentRaw: string;
  contentText: string;
  contentHtml: string;
}

export interface StreamEventDataMap {
  MESSAGE_CREATED: MessageCreatedData & { message: StreamMessage };
  MESSAGE_UPDATED: MessageUpdatedData & { message: StreamMessage };
  MESSAGE_DELETED: MessageDeletedData;
  REACTION_ADDED: ReactionData;
  REACTION_REMOVED: ReactionData;
  USER_JOINED_ROOM: RoomMembershipData;
  USER_LEFT_ROOM: RoomMembershipData;
  ROOM_DELETED: RoomDeletedData;
}
export type StreamEventName = keyof StreamEventDataMap;

export type StreamEventFrame = {
  [E in StreamEventName]: { type: "event"; event: E; roomId: number; data: StreamEventDataMap[E] };
}[StreamEventName];

export type StreamErrorCode =
  "forbidden" | "not_in_call" | "invalid_frame" | "signal_too_large" | "internal_error";

/** Every frame the server sends. */
export type ServerFrame =
  | { type: "ready"; userId: number; username: string }
  | { type: "subscribed"; roomId: number; present: string[] }
  | StreamEventFrame
  | { type: "presence"; roomId: number; present: string[] }
  | { type: "signal"; roomId: number; from: string; payload: unknown }
  /** To each of the user's connections: their read marker of the room moved (another tab read). */
  | { type: "read"; roomId: number; messageId: number }
  /**
   * To each of the user's connections: they became a member of a room or DM by someone's action
   * (`by`): a DM opened with them (or by them, in another tab), or a member added them to a room.
   * Subscribe to follow it.
   */
  | { type: "room_added"; roomId: number; kind: "room" | "dm"; by: string }
  /** Another member of a subscribed room is typing (at most one per 2 s per user and room). */
  | { type: "typing"; roomId: number; username: string }
  | { type: "error"; code: StreamErrorCode; roomId?: number }
  | { type: "pong" };

/** Every frame a client sends. */
export type ClientFrame =
  | { type: "auth"; token: string }
  | { type: "subscribe"; roomId: number; after?: number }
  | { type: "unsubscribe"; roomId: number }
  | { type: "signal"; roomId: number; to: string; payload: unknown }
  /** "I am typing" in a subscribed room; more than one per 2 s per room is dropped silently. */
  | { type: "typing"; roomId: number }
  | { type: "ping" };
