import type {
  Message,
  MessageListItem,
  MessageRevisions,
  StoredMessage,
} from "@parley/client/wire";
import type { AppContext } from "../app-context.js";
import type { RequestTrace } from "../tracing/request-trace.js";
import type { Principal } from "../auth/principal.js";
import { keysetSlice, type KeysetSlice } from "../db/keyset-slice.js";
import { AppError } from "../errors/app-error.js";
import { messageDeleted, messageNotFound } from "./message-lookup-errors.js";
import { isoTime } from "../events/event-catalogue.js";
import type { MessageFormat } from "./message-media-type.js";
import { HIDDEN_STATUSES, isHidden } from "./message-visibility.js";
import {
  findMessageViewRow,
  findRoomMessageViewRow,
  findThreadForReply,
  listNeighbourMessageViewRows,
  listRevisions,
  listRoomMessageViewRows,
  listRoomMessageViewRowsChangedSince,
  readMessageViewRow,
  type ChangeCursor,
  type HiddenFilter,
  type MessageViewRow,
} from "./messages-repository.js";
import type { MessageContent } from "./content-rules.js";
import { deleteMessage } from "./delete-message.js";
import { editMessage } from "./edit-message.js";
import { postMessage } from "./post-message.js";
import { listReactionSummaries, type ReactionSummary } from "./reactions-repository.js";
import { listMessageFiles, type MessageFile } from "./files-repository.js";
import { renderMessage } from "./rendering/render-message.js";
import { findLiveRoom, roomForMember } from "./room-access.js";
import { readDisplayName } from "./users-repository.js";
import { isMember } from "./rooms-repository.js";

export { HIDDEN_STATUSES };
export type { ChangeCursor };

/** A message as stored, as the API shows it: the wire's StoredMessage. */
export type MessageView = StoredMessage;

/** A message with the representations the `Accept` header asked for: the wire's Message. */
export type MessageRepresentation = Message;

function isoOrNull(epochMs: number | null): string | null {
  return epochMs === null ? null : isoTime(Number(epochMs));
}

/** A message of a list: its view (with its reactions), or its tombstone once deleted. */
export function toListItem(
  row: MessageViewRow,
  reactions: readonly ReactionSummary[] = [],
  files: readonly MessageFile[] = [],
): MessageListItem {
  if (row.deleted_at !== null) {
    return {
      id: row.id,
      roomId: row.room_id,
      threadId: row.thread_id,
      deleted: true,
      deletedAt: isoTime(Number(row.deleted_at)),
      replyCount: Number(row.reply_count),
      lastReplyAt: isoOrNull(row.last_reply_at),
    };
  }
  return toMessageView(row, reactions, files);
}

/** The messages of a list with their reactions and files (one query each for the page). */
async function toListItems(
  ctx: AppContext,
  rows: readonly MessageViewRow[],
): Promise<MessageListItem[]> {
  const live = rows.filter((row) => row.deleted_at === null).map((row) => row.id);
  const [reactions, files] = await Promise.all([
    listReactionSummaries(ctx.db, live),
    listMessageFiles(ctx.db, live),
  ]);
  return rows.map((row) => toListItem(row, reactions.get(row.id), files.get(row.id)));
}

/** One message's view with its reactions and files. */
export async function viewWithReactions(
  ctx: Pick<AppContext, "db">,
  row: MessageViewRow,
): Promise<MessageView> {
  const [reactions, files] = await Promise.all([
    listReactionSummaries(ctx.db, [row.id]),
    listMessageFiles(ctx.db, [row.id]),
  ]);
  return toMessageView(row, reactions.get(row.id), files.get(row.id));
}

export function toMessageView(
  row: MessageViewRow,
  reactions: readonly ReactionSummary[] = [],
  files: readonly MessageFile[] = [],
): MessageView {
  const integration = row.sender_user_id === null;
  return {
    id: row.id,
    roomId: row.room_id,
    content: row.content,
    contentFormat: row.content_format,
    sender: integration
      ? {
          type: "integration",
          id: row.inbound_webhook_id!,
          username: null,
          displayName: row.sender_display_name,
          avatarUrl: row.sender_avatar_url,
        }
      : {
          type: "user",
          id: row.sender_user_id!,
          username: row.username,
          displayName: row.sender_display_name,
          avatarUrl: null,
        },
    inboundWebhookId: row.inbound_webhook_id,
    moderationStatus: row.moderation_status,
    createdAt: isoTime(row.created_at),
    threadId: row.thread_id,
    replyCount: Number(row.reply_count),
    lastReplyAt: isoOrNull(row.last_reply_at),
    revision: Number(row.revision),
    editedAt: isoOrNull(row.edited_at),
    updatedAt: isoTime(Number(row.updated_at)),
    reactions: reactions.map((reaction) => ({ ...reaction, usernames: [...reaction.usernames] })),
    files: files.map((file) => ({ ...file })),
  };
}

/** Adds the representations the client asked for to a message view. */
export function representMessage(view: MessageView, format: MessageFormat): MessageRepresentation {
  if (format === "json") return view;
  const out: MessageRepresentation = { ...view };
  if (format === "raw" || format === "full") out.contentRaw = view.content;
  if (format === "text" || format === "html" || format === "full") {
    const rendered = renderMessage(view.content, view.contentFormat);
    if (format !== "html") out.contentText = rendered.text;
    if (format !== "text") out.contentHtml = rendered.html;
  }
  return out;
}

/**
 * A member posts into a room, under the display name they have now. The caller checks membership
 * before it reads the content, so a stranger learns nothing about the room's DLP policy;
 * postMessage() checks it again inside its transaction.
 */
export async function postRoomMessage(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
  message: MessageContent,
  options: {
    /** Unvalidated (postMessage checks it). */
    threadId?: unknown;
    /** Unvalidated (postMessage checks it). */
    fileIds?: unknown;
    /** The request's trace, handed down to the unit of work. */
    trace?: RequestTrace | undefined;
  } = {},
): Promise<MessageView> {
  const { threadId, fileIds, trace } = options;
  const displayName = await readDisplayName(ctx.db, actor.userId);
  const posted = await postMessage(ctx, {
    roomId,
    content: message.content,
    contentFormat: message.format,
    threadId,
    fileIds,
    sender: {
      type: "user",
      userId: actor.userId,
      username: actor.username,
      displayName,
    },
    trace,
  });
  // A new message has no reactions yet; it may have files.
  const row = await readMessageViewRow(ctx.db, posted.id);
  const files = fileIds === undefined ? undefined : await listMessageFiles(ctx.db, [posted.id]);
  return toMessageView(row, [], files?.get(posted.id));
}

/**
 * Top-level messages newest first, continuing before `cursorId`; with `threadId`, that thread's
 * replies oldest first, continuing after `cursorId`. Deleted messages appear as tombstones.
 * Members see visible messages; admins see every message of a room, members or not, but a direct
 * message only when they are one of its two members, or through the admin route (`asAdmin`),
 * which an admin must call on purpose.
 */
export async function listMessages(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
  page: { cursorId?: number | undefined; threadId?: number | undefined; limit: number },
  options: { asAdmin?: boolean } = {},
): Promise<KeysetSlice<MessageListItem>> {
  await readableRoom(ctx, actor, roomId, options);
  if (page.threadId !== undefined) await checkThread(ctx, actor, roomId, page.threadId);
  const rows = await listRoomMessageViewRows(ctx.db, roomId, {
    cursorId: page.cursorId,
    threadId: page.threadId,
    limit: page.limit,
    hidden: hiddenFrom(actor),
  });
  const slice = keysetSlice(rows, page.limit, (row) => row);
  return { ...slice, items: await toListItems(ctx, slice.items) };
}

/**
 * What `actor` does not see in a room's lists: an admin sees every message; anyone else not the
 * quarantined and rejected ones, except their own messages held for review (QUARANTINED), which
 * their author keeps seeing, marked, until a moderator decides. A rejected message is gone for
 * its author too.
 */
function hiddenFrom(actor: Principal): HiddenFilter {
  return actor.role === "admin"
    ? { statuses: [] }
    : { statuses: HIDDEN_STATUSES, heldVisibleTo: actor.userId };
}

/** A page of changes and where the next one continues (the last item's change). */
export interface ChangesSlice extends KeysetSlice<MessageListItem> {
  last: ChangeCursor | undefined;
}

/**
 * What changed in a room after `since` (a client that was away catches up): its messages of both
 * levels, tombstones included, whose updatedAt is later, oldest change first, continuing after
 * `after`; with `threadId`, that thread's replies only. Who may read it: as listMessages.
 */
export async function listMessageChanges(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
  page: {
    since: number;
    after?: ChangeCursor | undefined;
    threadId?: number | undefined;
    limit: number;
  },
  options: { asAdmin?: boolean } = {},
): Promise<ChangesSlice> {
  await readableRoom(ctx, actor, roomId, options);
  if (page.threadId !== undefined) await checkThread(ctx, actor, roomId, page.threadId);
  const rows = await listRoomMessageViewRowsChangedSince(ctx.db, roomId, {
    since: page.since,
    after: page.after,
    threadId: page.threadId,
    limit: page.limit,
    hidden: hiddenFrom(actor),
  });
  const rowSlice = keysetSlice(rows, page.limit, (row) => row);
  const slice = { ...rowSlice, items: await toListItems(ctx, rowSlice.items) };
  const lastRow = slice.hasMore ? rows[page.limit - 1] : undefined;
  return {
    ...slice,
    last: lastRow && { updatedAt: Number(lastRow.updated_at), id: lastRow.id },
  };
}

/** A thread whose replies `actor` may list (a deleted one's too: tombstones keep threads whole). */
async function checkThread(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
  threadId: number,
): Promise<void> {
  const thread = await findThreadForReply(ctx.db, roomId, threadId);
  if (
    !thread ||
    thread.thread_id !== null ||
    (actor.role !== "admin" && isHidden(thread.moderation_status))
  )
    throw new AppError(
      "invalid_thread",
      `threadId ${threadId} is not a top-level message of room ${roomId}`,
    );
}

async function readableRoom(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
  options: { asAdmin?: boolean },
): Promise<void> {
  if (options.asAdmin) await findLiveRoom(ctx.db, roomId);
  else await roomForMember(ctx.db, roomId, actor, { allowAdmin: true });
}

/**
 * The conversation around a message, for a moderator: up to `limit` messages before it and after
 * it at its level (the room's top level, or its thread), oldest first, hidden ones and tombstones
 * included, whatever the room (a direct message too: a flag in one is reviewed like any other).
 * Empty when the message does not exist.
 */
export async function listMessageNeighbours(
  ctx: AppContext,
  messageId: number,
  limit: number,
): Promise<{ before: MessageListItem[]; after: MessageListItem[] }> {
  const row = await findMessageViewRow(ctx.db, messageId);
  if (!row) return { before: [], after: [] };
  const at = { id: row.id, roomId: row.room_id, threadId: row.thread_id };
  const [before, after] = await Promise.all([
    listNeighbourMessageViewRows(ctx.db, at, "before", limit),
    listNeighbourMessageViewRows(ctx.db, at, "after", limit),
  ]);
  return {
    before: await toListItems(ctx, before.reverse()),
    after: await toListItems(ctx, after),
  };
}

/**
 * One message of a room, for admins and bots (the event payloads carry no content, so receivers
 * fetch it here). A hidden message answers 404 to a bot, exactly as a message of another room; a
 * deleted one 410 message_deleted. A direct message's messages are for its two members only:
 * anyone else gets 403, as on the list.
 */
export async function getMessage(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
  messageId: number,
): Promise<MessageView> {
  const row = await readableMessage(ctx, actor, roomId, messageId);
  return viewWithReactions(ctx, row);
}

/** The message as getMessage() finds it for `actor`, or the error it answers. */
async function readableMessage(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
  messageId: number,
): Promise<MessageViewRow> {
  const room = await findLiveRoom(ctx.db, roomId);
  if (room.kind === "dm" && !(await isMember(ctx.db, roomId, actor.userId))) {
    throw new AppError("not_a_member", `you are not a member of ${roomId}`);
  }
  const row = await findRoomMessageViewRow(ctx.db, roomId, messageId);
  if (!row || (isHidden(row.moderation_status) && actor.role !== "admin")) {
    throw messageNotFound(roomId, messageId);
  }
  if (row.deleted_at !== null) throw messageDeleted(messageId);
  return row;
}

/**
 * Every version of a message, oldest first, the current one included: for admins and bots (as
 * getMessage) and for its author (a user, in a room they can read). Anyone else: 403 not_author.
 */
export async function getRevisions(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
  messageId: number,
): Promise<MessageRevisions> {
  let row: MessageViewRow;
  if (actor.role === "user") {
    await roomForMember(ctx.db, roomId, actor);
    const found = await findRoomMessageViewRow(ctx.db, roomId, messageId);
    const own = found?.sender_user_id === actor.userId;
    // The author sees their own message even while it is hidden pending review; to anyone else a
    // hidden message does not exist.
    if (!found || (!own && isHidden(found.moderation_status)))
      throw messageNotFound(roomId, messageId);
    if (found.deleted_at !== null) throw messageDeleted(messageId);
    if (!own) throw new AppError("not_author", `you did not write message ${messageId}`);
    row = found;
  } else {
    row = await readableMessage(ctx, actor, roomId, messageId);
  }
  const earlier = await listRevisions(ctx.db, messageId);
  return {
    items: [
      ...earlier.map((revision) => ({
        revision: Number(revision.revision),
        content: revision.content,
        contentFormat: revision.content_format,
        editedAt: isoTime(Number(revision.edited_at)),
      })),
      {
        revision: Number(row.revision),
        content: row.content,
        contentFormat: row.content_format,
        editedAt: isoTime(Number(row.edited_at ?? row.created_at)),
      },
    ],
  };
}

/**
 * The author edits a message of a room they are a member of (an admin, too, edits only their
 * own): editMessage(). Answers the message as it is now.
 */
export async function editRoomMessage(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
  messageId: number,
  message: MessageContent,
): Promise<MessageView> {
  await roomForMember(ctx.db, roomId, actor);
  await editMessage(ctx, {
    roomId,
    messageId,
    content: message.content,
    contentFormat: message.format,
    editor: { userId: actor.userId, username: actor.username },
  });
  return viewWithReactions(ctx, await readMessageViewRow(ctx.db, messageId));
}

/**
 * Its author (a member) or an admin (any room or direct message) deletes a message:
 * deleteMessage().
 */
export async function deleteRoomMessage(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
  messageId: number,
): Promise<void> {
  if (actor.role === "admin") await findLiveRoom(ctx.db, roomId);
  else await roomForMember(ctx.db, roomId, actor);
  await deleteMessage(ctx, actor, roomId, messageId);
}
