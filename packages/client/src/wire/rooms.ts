/** Rooms and direct messages. */
import { Type, type Static } from "@sinclair/typebox";
import { Id, listQueryProperties, Nullable, StringEnum, Timestamp } from "./common.js";

export const ROOM_VISIBILITIES = ["public", "private"] as const;
/** "public": listed in `GET /api/rooms?scope=public`, anyone may join; "private": members add members. */
export const RoomVisibilitySchema = StringEnum(ROOM_VISIBILITIES);
export type RoomVisibility = Static<typeof RoomVisibilitySchema>;

/** The other person of a direct message, as the lists show it instead of a room name. */
export const RoomPeerSchema = Type.Object({
  id: Id(),
  username: Type.String(),
  displayName: Type.String(),
});
export type RoomPeer = Static<typeof RoomPeerSchema>;

/** A room, or a direct-message conversation (`kind: "dm"`, no name until it is promoted). */
export const RoomSchema = Type.Object({
  id: Id(),
  /** null for a direct message that was not promoted. */
  name: Nullable(Type.String(), { description: "null for a direct message that was not promoted" }),
  kind: StringEnum(["room", "dm"]),
  /** The creator's username; for a promoted direct message, whoever promoted it. */
  createdBy: Type.String({ description: "the creator's username" }),
  createdAt: Timestamp(),
  memberCount: Type.Integer(),
  /** Direct messages are always "private". */
  visibility: RoomVisibilitySchema,
  topic: Nullable(Type.String()),
  /**
   * A direct message's other person (null for a room, and for a direct message the other person
   * left): what a client shows as its name.
   */
  peer: Type.Unsafe<RoomPeer | null>({
    type: ["object", "null"],
    properties: RoomPeerSchema.properties,
    required: ["id", "username", "displayName"],
    description: "a direct message's other person; null for a room or when they left",
  }),
  /** For a member (lists and single rooms): the newest message id they have read (0: none). */
  lastReadMessageId: Type.Optional(Type.Integer({ minimum: 0 })),
  /**
   * For a member: top-level, visible messages after the read marker that others posted, counted
   * up to 1000 (a larger backlog shows as 1000).
   */
  unreadCount: Type.Optional(Type.Integer({ minimum: 0 })),
  /** For a member: messages (replies included) after the read marker that mention them. */
  mentionCount: Type.Optional(Type.Integer({ minimum: 0 })),
  /** In `scope=public`: whether the caller is a member. */
  joined: Type.Optional(Type.Boolean()),
});
/** A room, or a direct-message conversation (`kind: "dm"`, no name until it is promoted). */
export type Room = Static<typeof RoomSchema>;

/** Promoting a direct message to a room. */
export const RoomNameParamsSchema = Type.Object(
  { name: Type.String({ description: "1 to 200 characters, not blank; trimmed" }) },
  { additionalProperties: false },
);
export type RoomNameParams = Static<typeof RoomNameParamsSchema>;

/** Creating a room. */
export const CreateRoomParamsSchema = Type.Object(
  {
    name: Type.String({ description: "1 to 200 characters, not blank; trimmed" }),
    visibility: Type.Optional(RoomVisibilitySchema),
    topic: Type.Optional(
      Nullable(Type.String(), { description: "at most 500 characters; blank is none" }),
    ),
  },
  { additionalProperties: false },
);
export type CreateRoomParams = Static<typeof CreateRoomParamsSchema>;

/** `GET /api/rooms`: `scope=joined` (default) or `public`, `query` a name prefix. */
export const ListRoomsParamsSchema = Type.Object({
  ...listQueryProperties,
  scope: Type.Optional(StringEnum(["joined", "public"])),
  query: Type.Optional(Type.String({ maxLength: 200 })),
});
export type ListRoomsParams = Static<typeof ListRoomsParamsSchema>;

/** Opening a direct message: with `userId` or with `username` (one of them). */
export const OpenDmParamsSchema = Type.Object(
  {
    userId: Type.Optional(Id()),
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);
export type OpenDmParams = Static<typeof OpenDmParamsSchema>;

/** `POST /api/rooms/{roomId}/members`: a member adds someone. */
export const AddMemberParamsSchema = Type.Object({ userId: Id() }, { additionalProperties: false });
export type AddMemberParams = Static<typeof AddMemberParamsSchema>;

/** `PUT /api/rooms/{roomId}/read`: moves the caller's read marker forward to this message. */
export const MarkReadParamsSchema = Type.Object(
  { messageId: Id() },
  { additionalProperties: false },
);
export type MarkReadParams = Static<typeof MarkReadParamsSchema>;

/** The caller's read marker of a room and the counts that follow it. */
export const ReadMarkerSchema = Type.Object({
  roomId: Id(),
  lastReadMessageId: Type.Integer({ minimum: 0 }),
  unreadCount: Type.Integer({ minimum: 0 }),
  mentionCount: Type.Integer({ minimum: 0 }),
});
export type ReadMarker = Static<typeof ReadMarkerSchema>;
