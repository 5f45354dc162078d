import { sql, type Kysely, type Selectable } from "kysely";
import type { Database, RoomsTable } from "../db/schema.js";
import { startsWith } from "../db/starts-with.js";

/**
 * Queries on `rooms` and `room_members`. Rooms are soft-deleted (`deleted_at`): their messages and
 * files stay, and a deleted room answers as one that never existed. An open direct message holds
 * its pair's `dm_key`, which a unique index keeps to one open DM per pair. Every function takes
 * the database or a transaction.
 */
export type RoomRow = Selectable<RoomsTable>;

/** A live room with what its view shows: the creator's username, the member count, the peer. */
export interface RoomViewRow {
  id: number;
  name: string | null;
  kind: "room" | "dm";
  visibility: "public" | "private";
  topic: string | null;
  created_at: number;
  created_by_username: string;
  /** A count comes back as a string or bigint on PostgreSQL. */
  member_count: number | string | bigint | null;
  /** A DM's other member (null for a room, or when they left). */
  peer_id: number | null;
  peer_username: string | null;
  peer_display_name: string | null;
}

/** What a member's view adds: the read marker and the counts after it. */
export interface MemberRoomViewRow extends RoomViewRow {
  last_read_message_id: number | string;
  unread_count: number | string | bigint | null;
  mention_count: number | string | bigint | null;
}

/** What the public list adds: whether the viewer is a member. */
export interface PublicRoomViewRow extends RoomViewRow {
  joined: number | boolean | string;
}

/**
 * An unread count stops at this many: counting reads the index entries after the marker, so a
 * room with a large backlog costs at most this many per list call.
 */
export const UNREAD_COUNT_CAP = 1000;

/** Hidden messages (message-visibility.ts) are never unread; written out for the index's sake. */
const HIDDEN = sql.raw(`('QUARANTINED', 'REJECTED')`);

/**
 * The unread count of `rooms` for member `mine` (the query's aliases): top-level, visible, not
 * deleted messages of others after the marker, at most UNREAD_COUNT_CAP. Its terms match
 * `messages_room_unread`'s (migration 015) so both databases read the index alone.
 */
function unreadCount(userId: number) {
  return sql<number>`(select count(*) from (
    select 1 from messages m
    where m.room_id = rooms.id and m.id > mine.last_read_message_id
      and m.thread_id is null and m.deleted_at is null
      and (m.sender_user_id is null or m.sender_user_id <> ${userId})
      and m.moderation_status not in ${HIDDEN}
    limit ${sql.lit(UNREAD_COUNT_CAP)}) unread)`;
}

/** Messages after the marker that mention the member, deleted and hidden ones left out. */
function mentionCount(userId: number) {
  return sql<number>`(select count(*) from message_mentions mm
    inner join messages mentioning on mentioning.id = mm.message_id
    where mm.user_id = ${userId} and mm.room_id = rooms.id
      and mm.message_id > mine.last_read_message_id
      and mentioning.deleted_at is null and mentioning.moderation_status not in ${HIDDEN})`;
}

function selectRoomViewRows(db: Kysely<Database>, viewerId: number) {
  return db
    .selectFrom("rooms")
    .innerJoin("users as creator", "creator.id", "rooms.created_by")
    .leftJoin("users as peer", (join) =>
      join.on((eb) =>
        eb.and([
          eb("rooms.kind", "=", "dm"),
          eb(
            "peer.id",
            "=",
            eb
              .selectFrom("room_members as pm")
              .select("pm.user_id")
              .whereRef("pm.room_id", "=", "rooms.id")
              .where("pm.user_id", "!=", viewerId)
              .limit(1),
          ),
        ]),
      ),
    )
    .select((eb) => [
      "rooms.id",
      "rooms.name",
      "rooms.kind",
      "rooms.visibility",
      "rooms.topic",
      "rooms.created_at",
      "creator.username as created_by_username",
      "peer.id as peer_id",
      "peer.username as peer_username",
      "peer.display_name as peer_display_name",
      eb
        .selectFrom("room_members")
        .select((inner) => inner.fn.countAll<number>().as("count"))
        .whereRef("room_members.room_id", "=", "rooms.id")
        .as("member_count"),
    ])
    .where("rooms.deleted_at", "is", null);
}

/** The live room as `viewerId` sees it (the peer of a DM is the member who is not them). */
export async function findRoomViewRow(
  db: Kysely<Database>,
  roomId: number,
  viewerId: number,
): Promise<RoomViewRow | undefined> {
  return selectRoomViewRows(db, viewerId).where("rooms.id", "=", roomId).executeTakeFirst();
}

/**
 * The live rooms and DMs `userId` is a member of, ascending ids after `afterId`, `limit + 1`
 * rows, each with the member's read marker, unread count and mention count. `query`: a prefix of
 * the room's name or of a DM peer's username or display name.
 *
 * The counts read only what lies after the marker: the unread count walks
 * `messages_room_unread` (top-level, not deleted messages by room and id, with the sender and
 * moderation status in the index, so no table row is read) from the marker on, stopping at
 * UNREAD_COUNT_CAP; the mention count walks `message_mentions`' key (user, room, message) from
 * the marker on, and reads each mentioning message's row (mentions are few) to leave out the
 * deleted and hidden ones.
 */
export async function listMemberRoomViewRows(
  db: Kysely<Database>,
  userId: number,
  page: { afterId: number | undefined; limit: number; query?: string | undefined },
): Promise<MemberRoomViewRow[]> {
  let select = selectRoomViewRows(db, userId)
    .innerJoin("room_members as mine", (join) =>
      join.onRef("mine.room_id", "=", "rooms.id").on("mine.user_id", "=", userId),
    )
    .select([
      "mine.last_read_message_id",
      unreadCount(userId).as("unread_count"),
      mentionCount(userId).as("mention_count"),
    ])
    .orderBy("rooms.id", "asc")
    .limit(page.limit + 1);
  if (page.afterId !== undefined) select = select.where("rooms.id", ">", page.afterId);
  if (page.query) {
    const query = page.query;
    select = select.where((eb) =>
      eb.or([
        startsWith("rooms.name", query),
        startsWith("peer.username", query),
        startsWith("peer.display_name", query),
      ]),
    );
  }
  return select.execute() as Promise<MemberRoomViewRow[]>;
}

/**
 * The live public rooms (DMs never), ascending ids after `afterId`, `limit + 1` rows, each saying
 * whether `viewerId` is a member; `query` a prefix of the name. Reads `rooms_public`, so private
 * rooms are never read, let alone shown.
 */
export async function listPublicRoomViewRows(
  db: Kysely<Database>,
  viewerId: number,
  page: { afterId: number | undefined; limit: number; query?: string | undefined },
): Promise<PublicRoomViewRow[]> {
  let select = selectRoomViewRows(db, viewerId)
    .select((eb) =>
      eb
        .exists(
          eb
            .selectFrom("room_members as mine")
            .select("mine.user_id")
            .whereRef("mine.room_id", "=", "rooms.id")
            .where("mine.user_id", "=", viewerId),
        )
        .as("joined"),
    )
    .where("rooms.visibility", "=", "public")
    .where("rooms.kind", "=", "room")
    .orderBy("rooms.id", "asc")
    .limit(page.limit + 1);
  if (page.afterId !== undefined) select = select.where("rooms.id", ">", page.afterId);
  if (page.query) select = select.where(startsWith("rooms.name", page.query));
  return select.execute() as Promise<PublicRoomViewRow[]>;
}

/**
 * Every live room and direct message (an admin's list), ascending ids after `afterId`, `limit + 1`
 * rows; `query` a prefix of the name, `kind` rooms or direct messages only. A DM's peer is its
 * member who is not `viewerId` (the first, when the viewer is not in it).
 */
export async function listAllRoomViewRows(
  db: Kysely<Database>,
  viewerId: number,
  page: {
    afterId: number | undefined;
    limit: number;
    query?: string | undefined;
    kind?: "room" | "dm" | undefined;
  },
): Promise<RoomViewRow[]> {
  let select = selectRoomViewRows(db, viewerId)
    .orderBy("rooms.id", "asc")
    .limit(page.limit + 1);
  if (page.afterId !== undefined) select = select.where("rooms.id", ">", page.afterId);
  if (page.kind !== undefined) select = select.where("rooms.kind", "=", page.kind);
  if (page.query) select = select.where(startsWith("rooms.name", page.query));
  return select.execute();
}

/** A member's read marker of a room and the counts after it; undefined when not a member. */
export async function findReadMarkerRow(
  db: Kysely<Database>,
  roomId: number,
  userId: number,
): Promise<
  Pick<MemberRoomViewRow, "last_read_message_id" | "unread_count" | "mention_count"> | undefined
> {
  return db
    .selectFrom("room_members as mine")
    .innerJoin("rooms", "rooms.id", "mine.room_id")
    .select([
      "mine.last_read_message_id",
      unreadCount(userId).as("unread_count"),
      mentionCount(userId).as("mention_count"),
    ])
    .where("mine.room_id", "=", roomId)
    .where("mine.user_id", "=", userId)
    .executeTakeFirst();
}

/**
 * Moves a member's read marker forward to `messageId`, a message of that room (a deleted one
 * too); never back: a smaller id changes nothing, so two tabs racing leave the larger. One
 * statement, atomic on both databases. True when it moved.
 */
export async function advanceReadMarker(
  db: Kysely<Database>,
  roomId: number,
  userId: number,
  messageId: number,
): Promise<boolean> {
  const result = await db
    .updateTable("room_members")
    .set({ last_read_message_id: messageId })
    .where("room_id", "=", roomId)
    .where("user_id", "=", userId)
    .where("last_read_message_id", "<", messageId)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom("messages")
          .select("messages.id")
          .where("messages.id", "=", messageId)
          .where("messages.room_id", "=", roomId),
      ),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Whether `messageId` is a message of the room (deleted or not). */
export async function isMessageOfRoom(
  db: Kysely<Database>,
  roomId: number,
  messageId: number,
): Promise<boolean> {
  const row = await db
    .selectFrom("messages")
    .select("id")
    .where("id", "=", messageId)
    .where("room_id", "=", roomId)
    .executeTakeFirst();
  return row !== undefined;
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
  room: {
    name: string | null;
    kind: "room" | "dm";
    createdBy: number;
    dmKey: string | null;
    visibility: "public" | "private";
    topic: string | null;
  },
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
      visibility: room.visibility,
      topic: room.topic,
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
 * Turns a DM into a named public room in place (same id, members and history): a room like any
 * other, which anyone may join. The update matches only
 * while it is still a DM, so of two concurrent promotions one wins; false for the other.
 */
export async function promoteDmRow(
  db: Kysely<Database>,
  dmId: number,
  room: { name: string; createdBy: number },
): Promise<boolean> {
  const promoted = await db
    .updateTable("rooms")
    .set({
      kind: "room",
      name: room.name,
      dm_key: null,
      created_by: room.createdBy,
      visibility: "public",
    })
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

/**
 * Throws the dialect's unique violation when one of them is already a member. A new member's read
 * marker starts at the room's latest message: what was said before they came is not unread.
 */
export async function addMembers(
  db: Kysely<Database>,
  roomId: number,
  userIds: number[],
  now: number,
): Promise<void> {
  const latest = await db
    .selectFrom("messages")
    .select((eb) => eb.fn.max("id").as("id"))
    .where("room_id", "=", roomId)
    .executeTakeFirst();
  const marker = Number(latest?.id ?? 0);
  await db
    .insertInto("room_members")
    .values(
      userIds.map((userId) => ({
        room_id: roomId,
        user_id: userId,
        joined_at: now,
        last_read_message_id: marker,
      })),
    )
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

/**
 * Records who a message mentions (usernames of the room's members, as resolveMentions found
 * them), leaving out its sender: one statement, none without names. Replaces what an earlier
 * version of the message mentioned.
 */
export async function recordMentions(
  db: Kysely<Database>,
  message: { id: number; roomId: number; senderId: number | null },
  usernames: readonly string[],
  replace: boolean,
): Promise<void> {
  if (replace)
    await db.deleteFrom("message_mentions").where("message_id", "=", message.id).execute();
  if (usernames.length === 0) return;
  await db
    .insertInto("message_mentions")
    .columns(["user_id", "room_id", "message_id"])
    .expression((eb) => {
      let users = eb
        .selectFrom("users")
        .select((inner) => [
          "users.id",
          inner.val(message.roomId).as("room_id"),
          inner.val(message.id).as("message_id"),
        ])
        .where("users.username", "in", [...usernames]);
      if (message.senderId !== null) users = users.where("users.id", "!=", message.senderId);
      return users;
    })
    .execute();
}
