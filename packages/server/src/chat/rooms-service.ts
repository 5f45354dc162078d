import type { Kysely, Transaction } from "kysely";
import type { AppContext } from "../app-context.js";
import type { Principal } from "../auth/principal.js";
import { isUniqueViolation } from "../db/dialect.js";
import type { Database } from "../db/schema.js";
import { AppError } from "../errors/app-error.js";
import { eventData, isoTime } from "../events/event-catalogue.js";
import { inTransaction } from "../events/in-transaction.js";
import { decodeCursor, toPage, type Page } from "../http/pagination.js";
import { findLiveRoom, roomForMember } from "./room-access.js";

type Db = Kysely<Database> | Transaction<Database>;

/** A room or direct message as the API shows it. */
export interface RoomView {
  id: number;
  /** null for a direct message that was not promoted. */
  name: string | null;
  kind: "room" | "dm";
  /** The creator's username (as in ROOM_CREATED); for a promoted DM, whoever promoted it. */
  createdBy: string;
  createdAt: string;
  memberCount: number;
}

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

function selectRoomViews(db: Db) {
  return db
    .selectFrom("rooms")
    .innerJoin("users as creator", "creator.id", "rooms.created_by")
    .select((eb) => [
      "rooms.id",
      "rooms.name",
      "rooms.kind",
      "rooms.created_at",
      "creator.username as created_by_username",
      eb
        .selectFrom("room_members")
        .select((inner) => inner.fn.countAll<number>().as("count"))
        .whereRef("room_members.room_id", "=", "rooms.id")
        .as("member_count"),
    ])
    .where("rooms.deleted_at", "is", null);
}

interface RoomViewRow {
  id: number;
  name: string | null;
  kind: "room" | "dm";
  created_at: number;
  created_by_username: string;
  member_count: number | string | bigint | null;
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
export async function roomView(db: Db, roomId: number): Promise<RoomView> {
  const row = await selectRoomViews(db).where("rooms.id", "=", roomId).executeTakeFirst();
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
  return inTransaction(ctx, async (tx) => {
    const now = ctx.now();
    const room = await tx.db
      .insertInto("rooms")
      .values({
        name,
        kind: "room",
        created_by: actor.userId,
        deleted_at: null,
        created_at: now,
        dm_key: null,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    await tx.db
      .insertInto("room_members")
      .values({ room_id: room.id, user_id: actor.userId, joined_at: now })
      .execute();
    await tx.emit(
      "ROOM_CREATED",
      eventData.roomCreated({ roomId: room.id, createdBy: actor.username }),
    );
    return roomView(tx.db, room.id);
  });
}

/** The rooms and direct messages the caller is a member of, oldest first. */
export async function listRooms(
  ctx: AppContext,
  actor: Principal,
  query: { limit: number; cursor?: string | undefined },
): Promise<Page<RoomView>> {
  const after = decodeCursor(query.cursor);
  let select = selectRoomViews(ctx.db)
    .innerJoin("room_members as mine", (join) =>
      join.onRef("mine.room_id", "=", "rooms.id").on("mine.user_id", "=", actor.userId),
    )
    .orderBy("rooms.id", "asc")
    .limit(query.limit + 1);
  if (after !== undefined) select = select.where("rooms.id", ">", after);
  return toPage(await select.execute(), query.limit, toRoomView);
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
  return inTransaction(ctx, async (tx) => {
    const room = await findLiveRoom(tx.db, roomId);
    const member = await tx.db
      .selectFrom("room_members")
      .select("user_id")
      .where("room_id", "=", roomId)
      .where("user_id", "=", actor.userId)
      .executeTakeFirst();
    if (member) throw new AppError("already_member", `you are already a member of room ${roomId}`);
    if (room.kind === "dm") {
      throw new AppError(
        "not_a_member",
        `room ${roomId} is a direct message between two other users`,
      );
    }
    try {
      await tx.db
        .insertInto("room_members")
        .values({ room_id: roomId, user_id: actor.userId, joined_at: ctx.now() })
        .execute();
    } catch (error) {
      // A concurrent join of the same user won the race.
      if (isUniqueViolation(error))
        throw new AppError("already_member", `you are already a member of room ${roomId}`);
      throw error;
    }
    await tx.emit(
      "USER_JOINED_ROOM",
      eventData.roomMembership({ roomId, username: actor.username }),
    );
    return roomView(tx.db, roomId);
  });
}

/**
 * Leaves a room or direct message; fires USER_LEFT_ROOM. Leaving a DM closes it for good: the pair
 * opens a new one with POST /api/dms.
 */
export async function leaveRoom(ctx: AppContext, actor: Principal, roomId: number): Promise<void> {
  await inTransaction(ctx, async (tx) => {
    const room = await findLiveRoom(tx.db, roomId);
    const left = await tx.db
      .deleteFrom("room_members")
      .where("room_id", "=", roomId)
      .where("user_id", "=", actor.userId)
      .executeTakeFirst();
    if (Number(left.numDeletedRows) === 0)
      throw new AppError("not_a_member", `you are not a member of room ${roomId}`);
    if (room.kind === "dm")
      await tx.db.updateTable("rooms").set({ dm_key: null }).where("id", "=", roomId).execute();
    await tx.emit("USER_LEFT_ROOM", eventData.roomMembership({ roomId, username: actor.username }));
  });
}

/** Soft-deletes a live room; false when it was already gone (a concurrent delete won). */
async function markDeleted(
  tx: Transaction<Database>,
  roomId: number,
  now: number,
): Promise<boolean> {
  const result = await tx
    .updateTable("rooms")
    .set({ deleted_at: now, dm_key: null })
    .where("id", "=", roomId)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The creator deletes their room (or a DM they opened); fires ROOM_DELETED. */
export async function deleteRoom(ctx: AppContext, actor: Principal, roomId: number): Promise<void> {
  await inTransaction(ctx, async (tx) => {
    const room = await findLiveRoom(tx.db, roomId);
    if (room.created_by !== actor.userId) {
      throw new AppError("not_room_creator", `only the creator of room ${roomId} can delete it`);
    }
    if (!(await markDeleted(tx.db, roomId, ctx.now())))
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
  await inTransaction(ctx, async (tx) => {
    await findLiveRoom(tx.db, roomId);
    if (!(await markDeleted(tx.db, roomId, ctx.now())))
      throw new AppError("not_found", `no room ${roomId}`);
    await tx.emit(
      "ADMIN_ROOM_DELETED",
      eventData.adminRoomDeleted({ roomId, adminActor: actor.username }),
    );
  });
}
