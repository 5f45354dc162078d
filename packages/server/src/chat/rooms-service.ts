import type { Room } from "@parley/client/wire";
import type { Kysely } from "kysely";
import type { AppContext } from "../app-context.js";
import type { Principal } from "../auth/principal.js";
import { isUniqueViolation } from "../db/dialect.js";
import { keysetSlice, type KeysetSlice } from "../db/keyset-slice.js";
import type { Database } from "../db/schema.js";
import { AppError } from "../errors/app-error.js";
import { eventData, isoTime } from "../events/event-catalogue.js";
import { leaveCallIn } from "../realtime/calls-service.js";
import { findLiveRoom, roomForMember } from "./room-access.js";
import {
  addMembers,
  clearDmKey,
  findRoomViewRow,
  insertRoomRow,
  isMember,
  listMemberRoomViewRows,
  markRoomDeleted,
  removeMember,
  type RoomViewRow,
} from "./rooms-repository.js";

/** A room or direct message as the API shows it: the wire's Room. */
export type RoomView = Room;

export const MAX_ROOM_NAME_CHARS = 200;

/** Trims the name and checks it is 1..200 characters (code points, not UTF-16 units). */
export function validateRoomName(name: string): string {
  const trimmed = name.trim();
  const length = [...trimmed].length;
  if (length === 0 || length > MAX_ROOM_NAME_CHARS) {
    throw new AppError(
      "invalid_name",
      `a room name is 1 to ${MAX_ROOM_NAME_CHARS} characters, not blank; got ${length}`,
    );
  }
  return trimmed;
}

function toRoomView(row: RoomViewRow): RoomView {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    createdBy: row.created_by_username,
    createdAt: isoTime(row.created_at),
    memberCount: Number(row.member_count ?? 0),
  };
}

/** The view of a live room; 404 when it is gone. */
export async function roomView(db: Kysely<Database>, roomId: number): Promise<RoomView> {
  const row = await findRoomViewRow(db, roomId);
  if (!row) throw new AppError("not_found", `no room ${roomId}`);
  return toRoomView(row);
}

/** Creates a room with the caller as its first member; fires ROOM_CREATED. */
export async function createRoom(
  ctx: AppContext,
  actor: Principal,
  input: { name: string },
): Promise<RoomView> {
  const name = validateRoomName(input.name);
  return ctx.database.transaction(async (tx) => {
    const now = ctx.now();
    const roomId = await insertRoomRow(
      tx.db,
      { name, kind: "room", createdBy: actor.userId, dmKey: null },
      now,
    );
    await addMembers(tx.db, roomId, [actor.userId], now);
    await tx.emit("ROOM_CREATED", eventData.roomCreated({ roomId, createdBy: actor.username }));
    return roomView(tx.db, roomId);
  });
}

/** The rooms and direct messages the caller is a member of, oldest first. */
export async function listRooms(
  ctx: AppContext,
  actor: Principal,
  page: { afterId?: number | undefined; limit: number },
): Promise<KeysetSlice<RoomView>> {
  const rows = await listMemberRoomViewRows(ctx.db, actor.userId, {
    afterId: page.afterId,
    limit: page.limit,
  });
  return keysetSlice(rows, page.limit, toRoomView);
}

/** A room for one of its members, or for an admin. */
export async function getRoom(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
): Promise<RoomView> {
  await roomForMember(ctx.db, roomId, actor, { allowAdmin: true });
  return roomView(ctx.db, roomId);
}

/** Joins a room; fires USER_JOINED_ROOM. A direct message cannot be joined by anyone else. */
export async function joinRoom(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
): Promise<RoomView> {
  return ctx.database.transaction(async (tx) => {
    const room = await findLiveRoom(tx.db, roomId);
    if (await isMember(tx.db, roomId, actor.userId))
      throw new AppError("already_member", `you are already a member of room ${roomId}`);
    if (room.kind === "dm") {
      throw new AppError(
        "not_a_member",
        `room ${roomId} is a direct message between two other users`,
      );
    }
    try {
      await addMembers(tx.db, roomId, [actor.userId], ctx.now());
    } catch (error) {
      // A concurrent join of the same user won the race.
      if (isUniqueViolation(error))
        throw new AppError("already_member", `you are already a member of room ${roomId}`);
      throw error;
    }
    await tx.emit(
      "USER_JOINED_ROOM",
      eventData.roomMembership({ roomId, username: actor.username, via: "membership" }),
    );
    return roomView(tx.db, roomId);
  });
}

/**
 * Leaves a room or direct message, and its call; fires USER_LEFT_ROOM (in a DM, heard by its
 * members' streams only: EVENT_AUDIENCE). Leaving a DM closes it for good: the pair opens a new
 * one with POST /api/dms.
 */
export async function leaveRoom(ctx: AppContext, actor: Principal, roomId: number): Promise<void> {
  await ctx.database.transaction(async (tx) => {
    const room = await findLiveRoom(tx.db, roomId);
    if (!(await removeMember(tx.db, roomId, actor.userId)))
      throw new AppError("not_a_member", `you are not a member of room ${roomId}`);
    // No longer a member, so no longer in its call either (where they could still signal).
    await leaveCallIn(ctx, tx, roomId, actor);
    // Leaving a DM closes it for good.
    if (room.kind === "dm") await clearDmKey(tx.db, roomId);
    await tx.emit(
      "USER_LEFT_ROOM",
      eventData.roomMembership({ roomId, username: actor.username, via: "membership" }),
    );
  });
}

/**
 * The creator deletes their room (or a DM they opened); fires ROOM_DELETED (in a DM, heard by its
 * members' streams only).
 */
export async function deleteRoom(ctx: AppContext, actor: Principal, roomId: number): Promise<void> {
  await ctx.database.transaction(async (tx) => {
    const room = await findLiveRoom(tx.db, roomId);
    if (room.created_by !== actor.userId) {
      throw new AppError("not_room_creator", `only the creator of room ${roomId} can delete it`);
    }
    if (!(await markRoomDeleted(tx.db, roomId, ctx.now())))
      throw new AppError("not_found", `no room ${roomId}`);
    await tx.emit("ROOM_DELETED", eventData.roomDeleted({ roomId, deletedBy: actor.username }));
  });
}

/** An admin deletes any room or DM; fires ADMIN_ROOM_DELETED. */
export async function adminDeleteRoom(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
): Promise<void> {
  await ctx.database.transaction(async (tx) => {
    await findLiveRoom(tx.db, roomId);
    if (!(await markRoomDeleted(tx.db, roomId, ctx.now())))
      throw new AppError("not_found", `no room ${roomId}`);
    await tx.emit(
      "ADMIN_ROOM_DELETED",
      eventData.adminRoomDeleted({ roomId, adminActor: actor.username }),
    );
  });
}
