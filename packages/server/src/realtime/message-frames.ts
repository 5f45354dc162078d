import type { Kysely } from "kysely";
import {
  findMessageViewRow,
  listRoomMessageViewRowsAfter,
  type MessageViewRow,
} from "../chat/messages-repository.js";
import {
  HIDDEN_STATUSES,
  representMessage,
  toMessageView,
  viewWithReactions,
  type MessageRepresentation,
} from "../chat/messages-service.js";
import { listReactionSummaries, type ReactionSummary } from "../chat/reactions-repository.js";
import { listMessageFiles, type MessageFile } from "../chat/files-repository.js";
import { mentionCandidates, resolveMentions } from "../chat/mentions.js";
import { isHidden } from "../chat/message-visibility.js";
import type { Database } from "../db/schema.js";
import { eventData, type MessageCreatedData } from "../events/event-catalogue.js";

/** `data` of a MESSAGE_CREATED frame: the event's data plus the `.full+json` message object. */
export type MessageFrameData = MessageCreatedData & { message: MessageRepresentation };

/**
 * The message as GET /api/rooms/{roomId}/messages/{messageId} answers `.full+json`, unless it is
 * hidden or deleted by now.
 */
export async function loadFullMessage(
  db: Kysely<Database>,
  messageId: number,
): Promise<MessageRepresentation | undefined> {
  const row = await findMessageViewRow(db, messageId);
  // Hidden or deleted since its event: nothing of it goes out.
  if (!row || row.deleted_at !== null || isHidden(row.moderation_status)) return undefined;
  return representMessage(await viewWithReactions({ db }, row), "full");
}

/**
 * A message a resume sends: its id, and its MESSAGE_CREATED frame data, built when asked for
 * (rendering a message takes up to tens of milliseconds: a page is rendered one message at a
 * time, as it is sent, and a message the resume skips is never rendered).
 */
export interface ResumedMessage {
  readonly messageId: number;
  data(): MessageFrameData;
}

/**
 * The visible messages of a room with an id above `after`, oldest first, whose frame data is
 * built exactly as a live frame's (the same fields, in the same order).
 */
export async function messagesAfter(
  db: Kysely<Database>,
  roomId: number,
  after: number,
  limit: number,
): Promise<ResumedMessage[]> {
  const rows = await listRoomMessageViewRowsAfter(db, roomId, {
    afterId: after,
    limit,
    hiddenStatuses: HIDDEN_STATUSES,
  });
  return withReactions(db, rows);
}

/** The visible messages of a room among `ids`, in id order. */
export async function messagesByIds(
  db: Kysely<Database>,
  roomId: number,
  ids: readonly number[],
): Promise<ResumedMessage[]> {
  if (ids.length === 0) return [];
  const rows = await listRoomMessageViewRowsAfter(db, roomId, {
    ids,
    hiddenStatuses: HIDDEN_STATUSES,
  });
  return withReactions(db, rows);
}

/**
 * A page of resumed messages (all of one room), their reactions and files read in one query each and their
 * mentions resolved against the room's members in another (only for content holding an "@").
 */
async function withReactions(
  db: Kysely<Database>,
  rows: readonly MessageViewRow[],
): Promise<ResumedMessage[]> {
  const ids = rows.map((row) => row.id);
  const [reactions, files] = await Promise.all([
    listReactionSummaries(db, ids),
    listMessageFiles(db, ids),
  ]);
  const candidates = new Map(
    rows.map((row) => [row.id, mentionCandidates(row.content, row.content_format)]),
  );
  const all = [...candidates.values()].flat();
  const members = new Set(rows.length > 0 ? await resolveMentions(db, rows[0]!.room_id, all) : []);
  return rows.map((row) => ({
    messageId: row.id,
    data: () =>
      toFrameData(row, reactions.get(row.id), files.get(row.id), [
        ...new Set(
          candidates
            .get(row.id)!
            .map((names) => names.find((name) => members.has(name)))
            .filter((name): name is string => name !== undefined),
        ),
      ]),
  }));
}

function toFrameData(
  row: MessageViewRow,
  reactions: readonly ReactionSummary[] | undefined,
  files: readonly MessageFile[] | undefined,
  mentions: readonly string[],
): MessageFrameData {
  const view = toMessageView(row, reactions, files);
  return {
    ...eventData.messageCreated({
      roomId: view.roomId,
      messageId: view.id,
      senderId: view.sender.type === "user" ? view.sender.id : null,
      createdAt: Number(row.created_at),
      inboundWebhookId: view.inboundWebhookId,
      threadId: view.threadId,
      mentions,
    }),
    message: representMessage(view, "full"),
  };
}
