import type { Message, StoredMessage } from "@parley/client/wire";
import type { AppContext } from "../app-context.js";
import type { Principal } from "../auth/principal.js";
import { keysetSlice, type KeysetSlice } from "../db/keyset-slice.js";
import type { MessagesTable } from "../db/schema.js";
import { AppError } from "../errors/app-error.js";
import { isoTime } from "../events/event-catalogue.js";
import type { MessageFormat } from "./message-media-type.js";
import {
  findRoomMessageViewRow,
  listRoomMessageViewRows,
  readMessageViewRow,
  type MessageViewRow,
} from "./messages-repository.js";
import type { MessageContent } from "./content-rules.js";
import { postMessage } from "./post-message.js";
import { renderMessage } from "./rendering/render-message.js";
import { findLiveRoom, roomForMember } from "./room-access.js";
import { readDisplayName } from "./users-repository.js";
import { isMember } from "./rooms-repository.js";

/** A message as stored, as the API shows it: the wire's StoredMessage. */
export type MessageView = StoredMessage;

/** A message with the representations the `Accept` header asked for: the wire's Message. */
export type MessageRepresentation = Message;

/** Quarantined (pending review) and rejected messages are shown to admins only. */
export const HIDDEN_STATUSES = ["QUARANTINED", "REJECTED"] as const;

function isHidden(status: MessagesTable["moderation_status"]): boolean {
  return (HIDDEN_STATUSES as readonly string[]).includes(status);
}

export function toMessageView(row: MessageViewRow): MessageView {
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
): Promise<MessageView> {
  const displayName = await readDisplayName(ctx.db, actor.userId);
  const posted = await postMessage(ctx, {
    roomId,
    content: message.content,
    contentFormat: message.format,
    sender: {
      type: "user",
      userId: actor.userId,
      username: actor.username,
      displayName,
    },
  });
  return toMessageView(await readMessageViewRow(ctx.db, posted.id));
}

/**
 * Newest first. Members see visible messages; admins see every message of a room, members or not,
 * but a direct message only when they are one of its two members, or through the admin route
 * (`asAdmin`), which an admin must call on purpose.
 */
export async function listMessages(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
  page: { beforeId?: number | undefined; limit: number },
  options: { asAdmin?: boolean } = {},
): Promise<KeysetSlice<MessageView>> {
  if (options.asAdmin) await findLiveRoom(ctx.db, roomId);
  else await roomForMember(ctx.db, roomId, actor, { allowAdmin: true });
  const rows = await listRoomMessageViewRows(ctx.db, roomId, {
    beforeId: page.beforeId,
    limit: page.limit,
    hiddenStatuses: actor.role === "admin" ? [] : HIDDEN_STATUSES,
  });
  return keysetSlice(rows, page.limit, toMessageView);
}

/**
 * One message of a room, for admins and bots (the event payloads carry no content, so receivers
 * fetch it here). A hidden message answers 404 to a bot, exactly as a message of another room.
 * A direct message's messages are for its two members only: anyone else gets 403, as on the list.
 */
export async function getMessage(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
  messageId: number,
): Promise<MessageView> {
  const room = await findLiveRoom(ctx.db, roomId);
  if (room.kind === "dm" && !(await isMember(ctx.db, roomId, actor.userId))) {
    throw new AppError("not_a_member", `you are not a member of ${roomId}`);
  }
  const row = await findRoomMessageViewRow(ctx.db, roomId, messageId);
  if (!row || (isHidden(row.moderation_status) && actor.role !== "admin")) {
    throw new AppError("not_found", `no message ${messageId} in room ${roomId}`);
  }
  return toMessageView(row);
}
