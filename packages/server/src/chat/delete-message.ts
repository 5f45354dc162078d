import type { AppContext } from "../app-context.js";
import type { Principal } from "../auth/principal.js";
import { eraseFreedContent } from "../db/erase-freed-content.js";
import { AppError } from "../errors/app-error.js";
import { messageDeleted, messageNotFound } from "./message-lookup-errors.js";
import { deleteMessageFiles } from "./files-repository.js";
import { eventData } from "../events/event-catalogue.js";
import { isHidden } from "./message-visibility.js";
import {
  eraseMessage,
  findMessageForChange,
  findRoomForIngestPost,
  findRoomForPost,
  touchMessage,
} from "./messages-repository.js";

/**
 * Who deletes: a user (its author, or an admin), or an inbound webhook deleting a message it
 * posted (its token, by hash, checked again in the transaction; `name` is what deletedBy says).
 */
export type MessageDeleter =
  Principal | { type: "integration"; inboundWebhookId: number; name: string; tokenHash: string };

/**
 * Its author or an admin deletes a message: its content and every revision are removed from the
 * database (not hidden: the row stays as a tombstone, content emptied, so its id is never reused
 * and its thread keeps its shape), its thread's top-level message counts it as a change, and
 * MESSAGE_DELETED fires. Its files are deleted with it, rows and then bytes. On SQLite the freed space is zeroed and the write-ahead log emptied
 * before this returns (eraseFreedContent), so the text is not left in the database's files.
 * The caller checked that `actor` may read the room (a member, or an admin).
 */
export async function deleteMessage(
  ctx: AppContext,
  actor: MessageDeleter,
  roomId: number,
  messageId: number,
): Promise<void> {
  const hook = "type" in actor && actor.type === "integration" ? actor : undefined;
  const admin = !hook && (actor as Principal).role === "admin";
  const fileKeys = await ctx.database.transaction(async (tx) => {
    const room = hook
      ? await findRoomForIngestPost(tx.db, roomId, hook.inboundWebhookId, hook.tokenHash)
      : await findRoomForPost(tx.db, roomId);
    if (!room || room.deleted_at !== null) throw new AppError("not_found", `no room ${roomId}`);
    // A token disabled, rotated or deleted since ingest looked it up: as an unknown token.
    if ("tokenCurrent" in room && !room.tokenCurrent)
      throw new AppError("not_found", `no room ${roomId}`);
    const message = await findMessageForChange(tx.db, roomId, messageId);
    const own = hook
      ? message?.sender_user_id === null && message.inbound_webhook_id === hook.inboundWebhookId
      : message?.sender_user_id === (actor as Principal).userId;
    // To an inbound webhook, a message it did not post does not exist (as an unknown token).
    if (!message || (!own && (hook || (!admin && isHidden(message.moderation_status)))))
      throw messageNotFound(roomId, messageId, hook ? "integration" : "chat");
    if (message.deleted_at !== null) throw messageDeleted(messageId);
    if (!own && !admin)
      throw new AppError("not_author", `only its author or an admin can delete ${messageId}`);
    const now = ctx.now();
    await eraseMessage(tx.db, messageId, now);
    const keys = await deleteMessageFiles(tx.db, messageId);
    if (message.thread_id !== null) await touchMessage(tx.db, message.thread_id, now);
    await tx.emit(
      "MESSAGE_DELETED",
      eventData.messageDeleted({
        roomId,
        messageId,
        deletedBy: hook ? hook.name : (actor as Principal).username,
        deletedAt: now,
        threadId: message.thread_id,
      }),
    );
    return keys;
  });
  // The bytes go after their rows have: no row ever names bytes that are gone. A removal that
  // fails leaves bytes no row names, which nothing serves.
  await Promise.allSettled(fileKeys.map((key) => ctx.files.remove(key)));
  await eraseFreedContent(ctx.db);
}
