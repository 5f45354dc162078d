import type { Kysely, Selectable } from "kysely";
import type { Database, RoomsTable } from "../db/schema.js";

/**
 * Queries on `rooms` and `room_members`. Rooms are soft-deleted (`deleted_at`): their messages and
 * files stay, and a deleted room answers as one that never existed. An open direct message holds
 * its pair's `dm_key`, which a unique index keeps to one open DM per pair. Every function takes
 * the database or a transaction.
 */
export type RoomRow = Selectable<RoomsTable>;

/** A live room with what its view shows: the creator's username and the member count. */
export interface RoomViewRow {
  id: number;
  name: string | null;
  kind: "room" | "dm";
  created_at: number;
  created_by_username: string;
  /** A count comes back as a string or bigint on PostgreSQL. */
  member_count: number | string | bigint | null;
}

function selectRoomViewRows(db: Kysely<Database>) {
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

export async function findRoomViewRow(
  db: Kysely<Database>,
  roomId: number,
): Promise<RoomViewRow | undefined> {
  return selectRoomViewRows(db).where("rooms.id", "=", roomId).executeTakeFirst();
}

/** The live rooms `userId` is a member of, ascending ids after `afterId`; `limit + 1` rows. */
export async function listMemberRoomViewRows(
  db: Kysely<Database>,
  userId: number,
  page: { afterId: number | undefined; limit: number },
): Promise<RoomViewRow[]> {
  let select = selectRoomViewRows(db)
    .innerJoin("room_members as mine", (join) =>
      join.onRef("mine.room_id", "=", "rooms.id").on("mine.user_id", "=", userId),
    )
    .orderBy("rooms.id", "asc")
    .limit(page.limit + 1);
  if (page.afterId !== undefined) select = select.where("rooms.id", ">", page.afterId);
  return select.execute();
}

/** The row whether or not the room was deleted. */
export async function findRoomRow(
  db: Kysely<Database>,
  roomId: number,
): Promise<RoomRow | undefined> {
  return db.selectFrom("rooms").selectAll().where("id", "=", roomId).executeTakeFirst();
}

/** The open direct message holding this pair key, if any. */
export async function findOpenDmId(
  db: Kysely<Database>,
  dmKey: string,
): Promise<number | undefined> {
  const row = await db
    .selectFrom("rooms")
    .select("id")
    .where("dm_key", "=", dmKey)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  return row?.id;
}

/** Throws the dialect's unique violation when `dmKey` is already held by an open DM. */
export async function insertRoomRow(
  db: Kysely<Database>,
  room: { name: string | null; kind: "room" | "dm"; createdBy: number; dmKey: string | null },
  now: number,
): Promise<number> {
  const row = await db
    .insertInto("rooms")
    .values({
      name: room.name,
      kind: room.kind,
      created_by: room.createdBy,
      deleted_at: null,
      created_at: now,
      dm_key: room.dmKey,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Soft-deletes a live room and frees its DM key; false when it was already gone (a concurrent
 * delete won).
 */
export async function markRoomDeleted(
  db: Kysely<Database>,
  roomId: number,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable("rooms")
    .set({ deleted_at: now, dm_key: null })
    .where("id", "=", roomId)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A DM a member left is closed for good: the pair's next DM is a new one. */
export async function clearDmKey(db: Kysely<Database>, roomId: number): Promise<void> {
  await db.updateTable("rooms").set({ dm_key: null }).where("id", "=", roomId).execute();
}

/**
 * Turns a DM into a named room in place (same id, members and history). The update matches only
 * while it is still a DM, so of two concurrent promotions one wins; false for the other.
 */
export async function promoteDmRow(
  db: Kysely<Database>,
  dmId: number,
  room: { name: string; createdBy: number },
): Promise<boolean> {
  const promoted = await db
    .updateTable("rooms")
    .set({ kind: "room", name: room.name, dm_key: null, created_by: room.createdBy })
    .where("id", "=", dmId)
    .where("kind", "=", "dm")
    .executeTakeFirst();
  return Number(promoted.numUpdatedRows) === 1;
}

/** Which of these usernames belong to members of the room (one query). */
export async function findMemberUsernames(
  db: Kysely<Database>,
  roomId: number,
  usernames: readonly string[],
): Promise<string[]> {
  if (usernames.length === 0) return [];
  const rows = await db
    .selectFrom("room_members")
    .innerJoin("users", "users.id", "room_members.user_id")
    .select("users.username")
    .where("room_members.room_id", "=", roomId)
    .where("users.username", "in", usernames)
    .execute();
  return rows.map((row) => row.username);
}

export async function isMember(
  db: Kysely<Database>,
  roomId: number,
  userId: number,
): Promise<boolean> {
  const row = await db
    .selectFrom("room_members")
    .select("user_id")
    .where("room_id", "=", roomId)
    .where("user_id", "=", userId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Throws the dialect's unique violation when one of them is already a member. */
export async function addMembers(
  db: Kysely<Database>,
  roomId: number,
  userIds: number[],
  now: number,
): Promise<void> {
  await db
    .insertInto("room_members")
    .values(userIds.map((userId) => ({ room_id: roomId, user_id: userId, joined_at: now })))
    .execute();
}

/** False when the user was not a member. */
export async function removeMember(
  db: Kysely<Database>,
  roomId: number,
  userId: number,
): Promise<boolean> {
  const left = await db
    .deleteFrom("room_members")
    .where("room_id", "=", roomId)
    .where("user_id", "=", userId)
    .executeTakeFirst();
  return Number(left.numDeletedRows) > 0;
}

export async function removeFromEveryRoom(db: Kysely<Database>, userId: number): Promise<void> {
  await db.deleteFrom("room_members").where("user_id", "=", userId).execute();
}
