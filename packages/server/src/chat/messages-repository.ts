import type { Kysely, Selectable } from "kysely";
import { compiledOnce } from "../db/compiled-query.js";
import type { Database, MessagesTable } from "../db/schema.js";

/**
 * Queries on `messages`, and the statements of the post path. Messages are never deleted: a
 * rejected one is hidden by its `moderation_status`. Every function takes the database or a
 * transaction.
 */
export type ModerationStatusColumn = MessagesTable["moderation_status"];

function selectMessageViewRows(db: Kysely<Database>) {
  return db
    .selectFrom("messages")
    .leftJoin("users", "users.id", "messages.sender_user_id")
    .select([
      "messages.id",
      "messages.room_id",
      "messages.content",
      "messages.content_format",
      "messages.sender_user_id",
      "messages.inbound_webhook_id",
      "messages.sender_display_name",
      "messages.sender_avatar_url",
      "messages.moderation_status",
      "messages.created_at",
      "users.username",
    ]);
}

/** A message with its sender's username (null for an integration). */
export type MessageViewRow = Awaited<
  ReturnType<ReturnType<typeof selectMessageViewRows>["executeTakeFirstOrThrow"]>
>;

/** A message the caller knows exists (it just wrote it). */
export async function readMessageViewRow(
  db: Kysely<Database>,
  messageId: number,
): Promise<MessageViewRow> {
  return selectMessageViewRows(db).where("messages.id", "=", messageId).executeTakeFirstOrThrow();
}

/** The message, if it belongs to that room. */
export async function findRoomMessageViewRow(
  db: Kysely<Database>,
  roomId: number,
  messageId: number,
): Promise<MessageViewRow | undefined> {
  return selectMessageViewRows(db)
    .where("messages.id", "=", messageId)
    .where("messages.room_id", "=", roomId)
    .executeTakeFirst();
}

/**
 * A room's messages newest first, ids below `beforeId`, leaving out the `hiddenStatuses`;
 * `limit + 1` rows (the extra one tells whether another page exists).
 */
export async function listRoomMessageViewRows(
  db: Kysely<Database>,
  roomId: number,
  page: {
    beforeId: number | undefined;
    limit: number;
    hiddenStatuses: readonly ModerationStatusColumn[];
  },
): Promise<MessageViewRow[]> {
  let select = selectMessageViewRows(db)
    .where("messages.room_id", "=", roomId)
    .orderBy("messages.id", "desc")
    .limit(page.limit + 1);
  if (page.hiddenStatuses.length > 0)
    select = select.where("messages.moderation_status", "not in", page.hiddenStatuses);
  if (page.beforeId !== undefined) select = select.where("messages.id", "<", page.beforeId);
  return select.execute();
}

/**
 * A room's messages in id order, leaving out the `hiddenStatuses`: those with an id above
 * `afterId` (at most `limit`), or those among `ids`. The live stream's resume reads these.
 */
export async function listRoomMessageViewRowsAfter(
  db: Kysely<Database>,
  roomId: number,
  page: {
    afterId?: number;
    ids?: readonly number[];
    limit?: number;
    hiddenStatuses: readonly ModerationStatusColumn[];
  },
): Promise<MessageViewRow[]> {
  let select = selectMessageViewRows(db)
    .where("messages.room_id", "=", roomId)
    .orderBy("messages.id", "asc");
  if (page.hiddenStatuses.length > 0)
    select = select.where("messages.moderation_status", "not in", page.hiddenStatuses);
  if (page.afterId !== undefined) select = select.where("messages.id", ">", page.afterId);
  if (page.ids !== undefined) select = select.where("messages.id", "in", page.ids);
  if (page.limit !== undefined) select = select.limit(page.limit);
  return select.execute();
}

/** The message with that id, whatever its room, if it exists. */
export async function findMessageViewRow(
  db: Kysely<Database>,
  messageId: number,
): Promise<MessageViewRow | undefined> {
  return selectMessageViewRows(db).where("messages.id", "=", messageId).executeTakeFirst();
}

/** A reviewer's decision on a flagged message; returns what MESSAGE_CREATED needs. */
export async function setModerationStatus(
  db: Kysely<Database>,
  messageId: number,
  status: ModerationStatusColumn,
): Promise<
  Pick<
    Selectable<MessagesTable>,
    "id" | "room_id" | "sender_user_id" | "inbound_webhook_id" | "created_at"
  >
> {
  return db
    .updateTable("messages")
    .set({ moderation_status: status })
    .where("id", "=", messageId)
    .returning(["id", "room_id", "sender_user_id", "inbound_webhook_id", "created_at"])
    .executeTakeFirstOrThrow();
}

// The statements of every post, built and compiled once (Kysely's building and compiling cost
// more than SQLite running them).
const selectRoom = compiledOnce<
  { id: number; deleted_at: number | null; kind: "room" | "dm" },
  { roomId: number }
>((db, slot) =>
  db.selectFrom("rooms").select(["id", "deleted_at", "kind"]).where("id", "=", slot("roomId")),
);
const selectMember = compiledOnce<{ user_id: number }, { roomId: number; userId: number }>(
  (db, slot) =>
    db
      .selectFrom("room_members")
      .select("user_id")
      .where("room_id", "=", slot("roomId"))
      .where("user_id", "=", slot("userId")),
);
export type NewMessage = Omit<MessagesTable, "id">;
const insertMessage = compiledOnce<{ id: number; created_at: number }, NewMessage>((db, slot) =>
  db
    .insertInto("messages")
    .values({
      room_id: slot("room_id"),
      sender_user_id: slot("sender_user_id"),
      inbound_webhook_id: slot("inbound_webhook_id"),
      sender_display_name: slot("sender_display_name"),
      sender_avatar_url: slot("sender_avatar_url"),
      content: slot("content"),
      content_format: slot("content_format"),
      moderation_status: slot("moderation_status"),
      created_at: slot("created_at"),
    })
    .returning(["id", "created_at"]),
);

/** The post path's room check: the row whether or not the room was deleted. */
export async function findRoomForPost(
  db: Kysely<Database>,
  roomId: number,
): Promise<{ id: number; deleted_at: number | null; kind: "room" | "dm" } | undefined> {
  return (await selectRoom(db, { roomId })).rows[0];
}

/** The post path's membership check. */
export async function isMemberForPost(
  db: Kysely<Database>,
  roomId: number,
  userId: number,
): Promise<boolean> {
  return (await selectMember(db, { roomId, userId })).rows.length > 0;
}

export async function insertMessageRow(
  db: Kysely<Database>,
  message: NewMessage,
): Promise<{ id: number; created_at: number }> {
  return (await insertMessage(db, message)).rows[0]!;
}
