import type { AppContext } from "../app-context.js";
import type { Principal } from "../auth/principal.js";
import { isUniqueViolation } from "../db/dialect.js";
import { AppError } from "../errors/app-error.js";
import { eventData } from "../events/event-catalogue.js";
import type { AnnounceRoomAdded } from "./room-added-notice.js";
import { findLiveRoom } from "./room-access.js";
import {
  addMembers,
  findOpenDmId,
  insertRoomRow,
  isMember,
  promoteDmRow,
} from "./rooms-repository.js";
import { roomView, validateRoomName, type RoomView } from "./rooms-service.js";
import { findUserRow, findUserRowByUsername, type UserRow } from "./users-repository.js";

/** The pair's key, the same whichever of the two asks. */
function dmKey(a: number, b: number): string {
  return a < b ? `${a}:${b}` : `${b}:${a}`;
}

async function findOpenDm(
  ctx: AppContext,
  key: string,
  viewerId: number,
): Promise<RoomView | undefined> {
  const id = await findOpenDmId(ctx.db, key);
  return id === undefined ? undefined : roomView(ctx.db, id, viewerId);
}

/** Who to open a direct message with: by id or by username, exactly one of them. */
export type DmWith = { userId?: number | undefined; username?: string | undefined };

async function findOtherUser(ctx: AppContext, who: DmWith): Promise<UserRow> {
  if ((who.userId === undefined) === (who.username === undefined))
    throw new AppError("validation_failed", "give either userId or username", { field: "body" });
  const other =
    who.userId !== undefined
      ? await findUserRow(ctx.db, who.userId)
      : await findUserRowByUsername(ctx.db, who.username!);
  if (!other || other.status !== "active")
    throw new AppError("not_found", `no active user ${who.userId ?? JSON.stringify(who.username)}`);
  return other;
}

/**
 * Opens the direct message between the caller and another active user (by id or by username),
 * or returns the one that is already open between them (`created: false`). No event fires: a DM
 * becomes visible to integrations only when it is promoted to a room. The view shows the other
 * person as `peer`. A DM opened now is announced to both members' stream connections (the other
 * person's pages, and the opener's other tabs) once it committed.
 */
export async function openDm(
  ctx: AppContext,
  actor: Principal,
  who: DmWith,
  announce: AnnounceRoomAdded,
): Promise<{ room: RoomView; created: boolean }> {
  const other = await findOtherUser(ctx, who);
  const userId = other.id;
  if (userId === actor.userId)
    throw new AppError("cannot_dm_self", "a direct message needs another user");
  const key = dmKey(actor.userId, userId);
  const existing = await findOpenDm(ctx, key, actor.userId);
  if (existing) return { room: existing, created: false };
  try {
    const room = await ctx.database.transaction(async ({ db: trx }) => {
      const now = ctx.now();
      const roomId = await insertRoomRow(
        trx,
        {
          name: null,
          kind: "dm",
          createdBy: actor.userId,
          dmKey: key,
          visibility: "private",
          topic: null,
        },
        now,
      );
      await addMembers(trx, roomId, [actor.userId, userId], now);
      return roomView(trx, roomId, actor.userId);
    });
    for (const username of [other.username, actor.username])
      announce({ username, roomId: room.id, kind: "dm", by: actor.username });
    return { room, created: true };
  } catch (error) {
    // The other user opened the same DM at the same moment: theirs is the one.
    if (!isUniqueViolation(error)) throw error;
    const raced = await findOpenDm(ctx, key, actor.userId);
    if (!raced) throw error;
    return { room: raced, created: false };
  }
}

/**
 * Turns a direct message into a named room (same id, same members and history); fires
 * ROOM_CREATED with `convertedFromDm: true`. The member who promotes it becomes its creator. It
 * becomes a public room, like any other room (anyone may join it and read its history).
 */
export async function promoteDm(
  ctx: AppContext,
  actor: Principal,
  dmId: number,
  input: { name: string },
): Promise<RoomView> {
  const name = validateRoomName(input.name);
  return ctx.database.transaction(async (tx) => {
    const room = await findLiveRoom(tx.db, dmId);
    if (!(await isMember(tx.db, dmId, actor.userId)))
      throw new AppError("not_a_member", `you are not a member of ${dmId}`);
    if (room.kind !== "dm") throw new AppError("already_promoted", `${dmId} is already a room`);
    // A concurrent promotion of the same DM won.
    if (!(await promoteDmRow(tx.db, dmId, { name, createdBy: actor.userId })))
      throw new AppError("already_promoted", `${dmId} is already a room`);
    await tx.emit(
      "ROOM_CREATED",
      eventData.roomCreated({ roomId: dmId, createdBy: actor.username, convertedFromDm: true }),
    );
    return roomView(tx.db, dmId, actor.userId);
  });
}
