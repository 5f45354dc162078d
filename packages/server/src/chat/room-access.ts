import type { Kysely, Selectable, Transaction } from "kysely";
import type { Principal } from "../auth/principal.js";
import type { Database, RoomsTable } from "../db/schema.js";
import { AppError } from "../errors/app-error.js";

type Db = Kysely<Database> | Transaction<Database>;
export type RoomRow = Selectable<RoomsTable>;

/** The room, unless it does not exist or was deleted (both answer 404, as if it never existed). */
export async function findLiveRoom(db: Db, roomId: number): Promise<RoomRow> {
  const room = await db.selectFrom("rooms").selectAll().where("id", "=", roomId).executeTakeFirst();
  if (!room || room.deleted_at !== null) throw new AppError("not_found", `no room ${roomId}`);
  return room;
}

export async function isMember(db: Db, roomId: number, userId: number): Promise<boolean> {
  const row = await db
    .selectFrom("room_members")
    .select("user_id")
    .where("room_id", "=", roomId)
    .where("user_id", "=", userId)
    .executeTakeFirst();
  return row !== undefined;
}

/** The live room when the caller is a member (or, with `allowAdmin`, an admin); else 404 / 403. */
export async function roomForMember(
  db: Db,
  roomId: number,
  principal: Principal,
  options: { allowAdmin?: boolean } = {},
): Promise<RoomRow> {
  const room = await findLiveRoom(db, roomId);
  if (options.allowAdmin && principal.role === "admin") return room;
  if (!(await isMember(db, roomId, principal.userId))) {
    throw new AppError("not_a_member", `you are not a member of room ${roomId}`);
  }
  return room;
}
