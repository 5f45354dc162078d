import type { AppContext } from "../app-context.js";
import { AppError } from "../errors/app-error.js";
import { messageDeleted, messageNotFound } from "./message-lookup-errors.js";
import { eventData } from "../events/event-catalogue.js";
import { flagForModeration } from "./flag-for-moderation.js";
import { isHidden } from "./message-visibility.js";
import {
  findMessageForChange,
  findRoomForIngestPost,
  findRoomForPost,
  insertRevision,
  isMemberForPost,
  updateMessageContent,
  type MessageForChange,
} from "./messages-repository.js";
import { mentionCandidates, resolveMentions } from "./mentions.js";
import { refuseNonMember } from "./room-access.js";
import { recordMentions } from "./rooms-repository.js";
import { screenMessageContent } from "./screen-message-content.js";

export interface EditMessageInput {
  roomId: number;
  messageId: number;
  /** Unvalidated: checked by the same content rules, DLP and moderation as a post. */
  content: unknown;
  contentFormat?: unknown;
  /** Who edits: only a message's author may (a user, or the inbound webhook that posted it). */
  editor: MessageEditor;
}

/**
 * A user, or an inbound webhook editing its own message through ingest (its token, by hash,
 * checked again in the edit's transaction; `name` is what MESSAGE_UPDATED's editedBy says).
 */
export type MessageEditor =
  | { type?: "user"; userId: number; username: string }
  | { type: "integration"; inboundWebhookId: number; name: string; tokenHash: string };

/** The edit's outcome: the revision the message is at now, when it was made, whether this edit made it. */
export interface EditedMessage {
  revision: number;
  editedAt: number;
  changed: boolean;
}

function isAuthor(message: MessageForChange, editor: MessageEditor): boolean {
  return editor.type === "integration"
    ? message.sender_user_id === null && message.inbound_webhook_id === editor.inboundWebhookId
    : message.sender_user_id === editor.userId;
}

function noMessage(input: Pick<EditMessageInput, "roomId" | "messageId" | "editor">): AppError {
  return messageNotFound(
    input.roomId,
    input.messageId,
    input.editor.type === "integration" ? "integration" : "chat",
  );
}

/** 404 for a message not there (or hidden from a non-author), 410 deleted, 403 not the author. */
function checkEditable(
  message: MessageForChange | undefined,
  input: Pick<EditMessageInput, "roomId" | "messageId" | "editor">,
): void {
  if (!message) throw noMessage(input);
  const own = isAuthor(message, input.editor);
  // To an inbound webhook, a message it did not post does not exist (as an unknown token).
  if (!own && (isHidden(message.moderation_status) || input.editor.type === "integration"))
    throw noMessage(input);
  if (message.deleted_at !== null) throw messageDeleted(input.messageId);
  if (!own) throw new AppError("not_author", `you did not write message ${input.messageId}`);
}

/**
 * Whether `editor` may edit the message (editMessage checks it again in its transaction): routes
 * ask before they read the content, so the answer to a non-author does not depend on it.
 */
export async function checkMessageEditable(
  ctx: AppContext,
  input: Pick<EditMessageInput, "roomId" | "messageId" | "editor">,
): Promise<void> {
  checkEditable(await findMessageForChange(ctx.db, input.roomId, input.messageId), input);
}

/**
 * The author edits a message: the new content goes through screenMessageContent, exactly as a
 * post's (an edit cannot carry what a post could not), then one unit of work keeps the version it
 * replaces as a revision, writes the new one and fires MESSAGE_UPDATED. Moderation judges the new
 * content as a post's: FLAGGED queues it for review, QUARANTINED hides the message pending review
 * (and fires only the moderation event, as a post). A hidden message stays hidden whatever the
 * edit. The same content and format change nothing and fire nothing.
 */
export async function editMessage(
  ctx: AppContext,
  input: EditMessageInput,
): Promise<EditedMessage> {
  // Who may edit is answered before the content is looked at: a stranger to the message learns
  // nothing about what the room accepts, and no classifier is called for nothing.
  await checkMessageEditable(ctx, input);
  const { stored, format, text, moderation } = await screenMessageContent(
    ctx,
    input.content,
    input.contentFormat,
  );
  const editor = input.editor;
  return ctx.database.transaction(async (tx) => {
    const room =
      editor.type === "integration"
        ? await findRoomForIngestPost(
            tx.db,
            input.roomId,
            editor.inboundWebhookId,
            editor.tokenHash,
          )
        : await findRoomForPost(tx.db, input.roomId);
    if (!room || room.deleted_at !== null)
      throw new AppError("not_found", `no room ${input.roomId}`);
    // A token disabled, rotated or deleted since ingest looked it up: as an unknown token.
    if ("tokenCurrent" in room && !room.tokenCurrent)
      throw new AppError("not_found", `no room ${input.roomId}`);
    if (
      editor.type !== "integration" &&
      !(await isMemberForPost(tx.db, input.roomId, editor.userId))
    )
      throw "visibility" in room
        ? refuseNonMember(room, input.roomId)
        : new AppError("not_a_member", `you are not a member of room ${input.roomId}`);
    const message = await findMessageForChange(tx.db, input.roomId, input.messageId);
    checkEditable(message, input);
    const current = message!;
    if (current.content === stored && current.content_format === format)
      return {
        revision: current.revision,
        editedAt: current.edited_at ?? current.created_at,
        changed: false,
      };

    const now = ctx.now();
    const revision = current.revision + 1;
    const status = isHidden(current.moderation_status)
      ? current.moderation_status
      : (moderation?.status ?? current.moderation_status);
    await insertRevision(tx.db, {
      message_id: current.id,
      revision: current.revision,
      content: current.content,
      content_format: current.content_format,
      edited_at: current.edited_at ?? current.created_at,
    });
    await updateMessageContent(tx.db, current.id, {
      content: stored,
      content_format: format,
      content_text: text,
      revision,
      moderation_status: status,
      now,
    });
    const mentions = await resolveMentions(tx.db, input.roomId, mentionCandidates(stored, format));
    // Mention counts follow the new content.
    await recordMentions(
      tx.db,
      { id: current.id, roomId: input.roomId, senderId: current.sender_user_id },
      mentions,
      true,
    );
    // As MESSAGE_CREATED: a hidden message's edits are not announced (its audience: the catalogue's).
    if (!isHidden(status)) {
      await tx.emit(
        "MESSAGE_UPDATED",
        eventData.messageUpdated({
          roomId: input.roomId,
          messageId: current.id,
          revision,
          editedBy: editor.type === "integration" ? editor.name : editor.username,
          editedAt: now,
          mentions,
        }),
      );
    }
    if (moderation) {
      await flagForModeration(ctx, tx, {
        messageId: current.id,
        roomId: input.roomId,
        senderId: current.sender_user_id,
        revision,
        moderation,
        now,
      });
    }
    return { revision, editedAt: now, changed: true };
  });
}
