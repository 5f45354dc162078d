import type { Insertable, Kysely } from "kysely";
import type { Database, FilesTable, MessagesTable } from "../db/schema.js";

/**
 * Queries on `files`: one row per stored upload; the bytes live in the file storage under
 * `storage_key`; `message_id` is the message that carries it (null until a post attaches it).
 * Every function takes the database or a transaction.
 */
export async function insertFileRow(
  db: Kysely<Database>,
  values: Insertable<FilesTable>,
): Promise<number> {
  const row = await db.insertInto("files").values(values).returning("id").executeTakeFirstOrThrow();
  return row.id;
}

/** A file of a room as a download needs it, with the state of the message that carries it. */
export interface RoomFileRow {
  id: number;
  uploaded_by: number;
  file_name: string;
  file_size: number;
  file_type: string;
  sha256: string;
  storage_key: string;
  message_id: number | null;
  /** Null when no message carries the file. */
  message_status: MessagesTable["moderation_status"] | null;
  message_deleted_at: number | null;
}

/** The file, if it belongs to that room. */
export async function findRoomFile(
  db: Kysely<Database>,
  roomId: number,
  fileId: number,
): Promise<RoomFileRow | undefined> {
  return db
    .selectFrom("files")
    .leftJoin("messages", "messages.id", "files.message_id")
    .select([
      "files.id",
      "files.uploaded_by",
      "files.file_name",
      "files.file_size",
      "files.file_type",
      "files.sha256",
      "files.storage_key",
      "files.message_id",
      "messages.moderation_status as message_status",
      "messages.deleted_at as message_deleted_at",
    ])
    .where("files.id", "=", fileId)
    .where("files.room_id", "=", roomId)
    .executeTakeFirst();
}

/**
 * Attaches `fileIds` to a new message: those of them uploaded to `roomId` by `uploaderId` and not
 * yet carried by a message. One statement, so two posts racing for the same file cannot both
 * take it (the second finds `message_id` set). Answers how many it attached: fewer than asked
 * means some file was not the poster's to attach, and the caller rolls back.
 */
export async function attachFiles(
  db: Kysely<Database>,
  attach: { messageId: number; roomId: number; uploaderId: number; fileIds: readonly number[] },
): Promise<number> {
  const result = await db
    .updateTable("files")
    .set({ message_id: attach.messageId })
    .where("id", "in", attach.fileIds)
    .where("room_id", "=", attach.roomId)
    .where("uploaded_by", "=", attach.uploaderId)
    .where("message_id", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** A file as a message lists it. */
export interface MessageFile {
  id: number;
  name: string;
  size: number;
  mediaType: string;
}

/** The files of each of `messageIds`, in the order they were uploaded (one query for a page). */
export async function listMessageFiles(
  db: Kysely<Database>,
  messageIds: readonly number[],
): Promise<Map<number, MessageFile[]>> {
  const byMessage = new Map<number, MessageFile[]>();
  if (messageIds.length === 0) return byMessage;
  const rows = await db
    .selectFrom("files")
    .select(["id", "message_id", "file_name", "file_size", "file_type"])
    .where("message_id", "in", messageIds)
    .orderBy("id", "asc")
    .execute();
  for (const row of rows) {
    const messageId = Number(row.message_id);
    const list = byMessage.get(messageId) ?? [];
    list.push({
      id: Number(row.id),
      name: row.file_name,
      size: Number(row.file_size),
      mediaType: row.file_type,
    });
    byMessage.set(messageId, list);
  }
  return byMessage;
}

/** Deletes a message's file rows; answers their storage keys, whose bytes the caller removes. */
export async function deleteMessageFiles(
  db: Kysely<Database>,
  messageId: number,
): Promise<string[]> {
  const rows = await db
    .deleteFrom("files")
    .where("message_id", "=", messageId)
    .returning("storage_key")
    .execute();
  return rows.map((row) => row.storage_key);
}
