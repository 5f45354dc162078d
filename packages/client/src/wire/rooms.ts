/** Rooms and direct messages. */
import { Type, type Static } from "@sinclair/typebox";
import { Id, Nullable, StringEnum, Timestamp } from "./common.js";

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
});
/** A room, or a direct-message conversation (`kind: "dm"`, no name until it is promoted). */
export type Room = Static<typeof RoomSchema>;

/** Creating a room, or promoting a direct message to one. */
export const RoomNameParamsSchema = Type.Object(
  { name: Type.String({ description: "1 to 200 characters, not blank; trimmed" }) },
  { additionalProperties: false },
);
export type RoomNameParams = Static<typeof RoomNameParamsSchema>;

export const OpenDmParamsSchema = Type.Object({ userId: Id() }, { additionalProperties: false });
export type OpenDmParams = Static<typeof OpenDmParamsSchema>;
