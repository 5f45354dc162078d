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
import type { Tx } from "../db/unit-of-work.js";
import { findLiveRoom, isPrivateRoom, roomForMember } from "./room-access.js";
import {
  addMembers,
  clearDmKey,
  findReadMarkerRow,
  findRoomViewRow,
  insertRoomRow,
  isMember,
  listMemberRoomViewRows,
  listAllRoomViewRows,
  listPublicRoomViewRows,
  markRoomDeleted,
  removeMember,
  type MemberRoomViewRow,
  type PublicRoomViewRow,
  type RoomViewRow,
} from "./rooms-repository.js";
import { findUserRow } from "./users-repository.js";
import type { AnnounceRoomAdded } from "./room-added-notice.js";

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

export const MAX_TOPIC_CHARS = 500;

/** Trims the topic; blank is none (null); at most 500 characters (code points). */
export function validateTopic(topic: string | null | undefined): string | null {
  const trimmed = (topic ?? "").trim();
  if (trimmed === "") return null;
  const length = [...trimmed].length;
  if (length > MAX_TOPIC_CHARS)
    throw new AppError(
      "invalid_topic",
      `a room topic is at most ${MAX_TOPIC_CHARS} characters; got ${length}`,
    );
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
    visibility: row.visibility,
    topic: row.topic,
    peer:
      row.peer_id === null
        ? null
        : {
            id: Number(row.peer_id),
            username: row.peer_username!,
            displayName: row.peer_display_name!,
          },
  };
}

function toMemberRoomView(row: MemberRoomViewRow): RoomView {
  return {
    ...toRoomView(row),
    lastReadMessageId: Number(row.last_read_message_id),
    unreadCount: Number(row.unread_count ?? 0),
    mentionCount: Number(row.mention_count ?? 0),
  };
}

function toPublicRoomView(row: PublicRoomViewRow): RoomView {
  // 1/0 on SQLite, a boolean on PostgreSQL.
  return { ...toRoomView(row), joined: Boolean(Number(row.joined)) };
}

/** The view of a live room as `viewerId` sees it (a DM's peer); 404 when it is gone. */
export async function roomView(
  db: Kysely<Database>,
  roomId: number,
  viewerId: number,
): Promise<RoomView> {
  const row = await findRoomViewRow(db, roomId, viewerId);
  if (!row) throw new AppError("not_found", `no room ${roomId}`);
  return toRoomView(row);
}

/** The view of a room for one of its members: with the read marker and the counts after it. */
async function memberRoomView(
  db: Kysely<Database>,
  roomId: number,
  userId: number,
): Promise<RoomView> {
  const view = await roomView(db, roomId, userId);
  const marker = await findReadMarkerRow(db, roomId, userId);
  if (!marker) return view;
  return {
    ...view,
    lastReadMessageId: Number(marker.last_read_message_id),
    unreadCount: Number(marker.unread_count ?? 0),
    mentionCount: Number(marker.mention_count ?? 0),
  };
}

/** Creates a room with the caller as its first member; fires ROOM_CREATED. */
export async function createRoom(
  ctx: AppContext,
  actor: Principal,
  input: { name: string; visibility?: "public" | "private"; topic?: string | null },
): Promise<RoomView> {
  const name = validateRoomName(input.name);
  const topic = validateTopic(input.topic);
  return ctx.database.transaction(async (tx) => {
    const now = ctx.now();
    const roomId = await insertRoomRow(
      tx.db,
      {
        name,
        kind: "room",
        createdBy: actor.userId,
        dmKey: null,
        visibility: input.visibility ?? "public",
        topic,
      },
      now,
    );
    await addMembers(tx.db, roomId, [actor.userId], now);
    await tx.emit("ROOM_CREATED", eventData.roomCreated({ roomId, createdBy: actor.username }));
    return memberRoomView(tx.db, roomId, actor.userId);
  });
}

export interface ListRoomsQuery {
  /** "joined" (default): the caller's rooms and DMs with their counts; "public": rooms to browse. */
  scope?: "joined" | "public" | undefined;
  /** A prefix of the name (and, for DMs, of the peer's username or display name). */
  query?: string | undefined;
  afterId?: number | undefined;
  limit: number;
}

/**
 * The rooms and direct messages the caller is a member of, oldest first, each with its read
 * marker, unread and mention counts; or (`scope: "public"`) the public rooms, oldest first, each
 * saying whether the caller is a member. Private rooms are listed to their members only.
 */
export async function listRooms(
  ctx: AppContext,
  actor: Principal,
  page: ListRoomsQuery,
): Promise<KeysetSlice<RoomView>> {
  const query = page.query?.trim() || undefined;
  if (page.scope === "public") {
    const rows = await listPublicRoomViewRows(ctx.db, actor.userId, {
      afterId: page.afterId,
      limit: page.limit,
      query,
    });
    return keysetSlice(rows, page.limit, toPublicRoomView);
  }
  const rows = await listMemberRoomViewRows(ctx.db, actor.userId, {
    afterId: page.afterId,
    limit: page.limit,
    query,
  });
  return keysetSlice(rows, page.limit, toMemberRoomView);
}

/**
 * Every live room and direct message, oldest first, private ones included: an admin's list (the
 * admin pages' rooms page and their room pickers). No counts: the admin is not a member.
 */
export async function listAllRooms(
  ctx: AppContext,
  actor: Principal,
  page: {
    query?: string | undefined;
    kind?: "room" | "dm" | undefined;
    afterId?: number | undefined;
    limit: number;
  },
): Promise<KeysetSlice<RoomView>> {
  const rows = await listAllRoomViewRows(ctx.db, actor.userId, {
    afterId: page.afterId,
    limit: page.limit,
    query: page.query?.trim() || undefined,
    kind: page.kind,
  });
  return keysetSlice(rows, page.limit, toRoomView);
}

/** A room for one of its members (with their counts), or for an admin. */
export async function getRoom(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
): Promise<RoomView> {
  await roomForMember(ctx.db, roomId, actor, { allowAdmin: true });
  return memberRoomView(ctx.db, roomId, actor.userId);
}

/**
 * Adds `userId` to the room and fires USER_JOINED_ROOM (via "membership"), in the caller's unit
 * of work: joining and being added are the same change.
 */
async function addMember(
  tx: Tx,
  roomId: number,
  user: { id: number; username: string },
  now: number,
) {
  try {
    await addMembers(tx.db, roomId, [user.id], now);
  } catch (error) {
    // A concurrent join or add of the same user won the race.
    if (isUniqueViolation(error))
      throw new AppError(
        "already_member",
        `${user.username} is already a member of room ${roomId}`,
      );
    throw error;
  }
  await tx.emit(
    "USER_JOINED_ROOM",
    eventData.roomMembership({ roomId, username: user.username, via: "membership" }),
  );
}

/**
 * Joins a public room; fires USER_JOINED_ROOM. A private room is joined only by being added, and
 * answers a non-member 404, as a room that does not exist (its existence is not told); a direct
 * message cannot be joined by anyone else (403, as before).
 */
export async function joinRoom(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
): Promise<RoomView> {
  return ctx.database.transaction(async (tx) => {
    const room = await findLiveRoom(tx.db, roomId);
    const member = await isMember(tx.db, roomId, actor.userId);
    if (!member && isPrivateRoom(room)) throw new AppError("not_found", `no room ${roomId}`);
    if (member) throw new AppError("already_member", `you are already a member of room ${roomId}`);
    if (room.kind === "dm") {
      throw new AppError(
        "not_a_member",
        `room ${roomId} is a direct message between two other users`,
      );
    }
    await addMember(tx, roomId, { id: actor.userId, username: actor.username }, ctx.now());
    return memberRoomView(tx.db, roomId, actor.userId);
  });
}

/**
 * A member adds an active user to a room (public or private); fires USER_JOINED_ROOM with via
 * "membership", as joining does. A non-member of a private room gets 404 (as for no room), of a
 * public one 403; a direct message keeps its two members (409 dm_members_fixed: promote it first).
 * Once committed, `announce` tells the added user's stream connections.
 */
export async function addRoomMember(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
  userId: number,
  announce: AnnounceRoomAdded,
): Promise<RoomView> {
  const { view, added } = await ctx.database.transaction(async (tx) => {
    const room = await roomForMember(tx.db, roomId, actor);
    if (room.kind === "dm")
      throw new AppError(
        "dm_members_fixed",
        `room ${roomId} is a direct message: promote it to a room to add people`,
      );
    const user = await findUserRow(tx.db, userId);
    if (!user || user.status !== "active")
      throw new AppError("not_found", `no active user ${userId}`);
    await addMember(tx, roomId, user, ctx.now());
    return { view: await memberRoomView(tx.db, roomId, actor.userId), added: user.username };
  });
  announce({ username: added, roomId, kind: "room", by: actor.username });
  return view;
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
