import type { Kysely } from "kysely";
import type { Principal } from "../auth/principal.js";
import type { Database } from "../db/schema.js";
import { AppError } from "../errors/app-error.js";
import { findRoomRow, isMember, type RoomRow } from "./rooms-repository.js";

/** The room, unless it does not exist or was deleted (both answer 404, as if it never existed). */
export async function findLiveRoom(db: Kysely<Database>, roomId: number): Promise<RoomRow> {
  const room = await findRoomRow(db, roomId);
  if (!room || room.deleted_at !== null) throw new AppError("not_found", `no room ${roomId}`);
  return room;
}

/** A room (not a DM) only its members may see: its non-members are told nothing of it. */
export function isPrivateRoom(room: Pick<RoomRow, "kind" | "visibility">): boolean {
  return room.kind === "room" && room.visibility === "private";
}

/**
 * What a non-member is told: a private room answers 404 as a room that does not exist (its
 * existence is not told to those outside it); a public room or a DM, 403 not_a_member.
 */
export function refuseNonMember(
  room: Pick<RoomRow, "kind" | "visibility">,
  roomId: number,
): AppError {
  return isPrivateRoom(room)
    ? new AppError("not_found", `no room ${roomId}`)
    : new AppError("not_a_member", `you are not a member of room ${roomId}`);
}

/**
 * The live room when the caller is a member; else 404 / 403 (404 for a private room:
 * refuseNonMember). `allowAdmin` lets an admin into a
 * room, never into a direct message: a DM is readable by its two members only (admins go through
 * the explicit admin route, GET /api/admin/rooms/{roomId}/messages).
 */
export async function roomForMember(
  db: Kysely<Database>,
  roomId: number,
  principal: Principal,
  options: { allowAdmin?: boolean } = {},
): Promise<RoomRow> {
  const room = await findLiveRoom(db, roomId);
  if (options.allowAdmin && principal.role === "admin" && room.kind === "room") return room;
  if (!(await isMember(db, roomId, principal.userId))) throw refuseNonMember(room, roomId);
  return room;
}
