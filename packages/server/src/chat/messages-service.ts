import type { Kysely, Transaction } from "kysely";
import type { AppContext } from "../app-context.js";
import type { Principal } from "../auth/principal.js";
import type { Database, MessagesTable } from "../db/schema.js";
import { AppError } from "../errors/app-error.js";
import { isoTime } from "../events/event-catalogue.js";
import { decodeCursor, toPage, type Page } from "../http/pagination.js";
import type { MessageFormat } from "./message-media-type.js";
import { postMessage, validateContent } from "./post-message.js";
import { renderMessage } from "./rendering/render-message.js";
import { findLiveRoom, roomForMember } from "./room-access.js";

type Db = Kysely<Database> | Transaction<Database>;

export interface MessageView {
  id: number;
  roomId: number;
  content: string;
  contentFormat: "markdown" | "html";
  sender: {
    type: "user" | "integration";
    /** The user's id, or the inbound webhook's id for an integration. */
    id: number;
    username: string | null;
    displayName: string;
    avatarUrl: string | null;
  };
  inboundWebhookId: number | null;
  moderationStatus: MessagesTable["moderation_status"];
  createdAt: string;
}

export interface MessageRepresentation extends MessageView {
  contentRaw?: string;
  contentText?: string;
  contentHtml?: string;
}

/** Quarantined (pending review) and rejected messages are shown to admins only. */
const HIDDEN_STATUSES = ["QUARANTINED", "REJECTED"] as const;

function isHidden(status: MessagesTable["moderation_status"]): boolean {
  return (HIDDEN_STATUSES as readonly string[]).includes(status);
}

function selectMessageViews(db: Db) {
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

type MessageViewRow = Awaited<
  ReturnType<ReturnType<typeof selectMessageViews>["executeTakeFirstOrThrow"]>
>;

function toMessageView(row: MessageViewRow): MessageView {
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

async function messageView(db: Db, messageId: number): Promise<MessageView> {
  return toMessageView(
    await selectMessageViews(db).where("messages.id", "=", messageId).executeTakeFirstOrThrow(),
  );
}

/**
 * A member posts into a room. Membership is checked before the content, so a stranger learns
 * nothing about the room's DLP policy; postMessage() checks it again inside its transaction.
 */
export async function postRoomMessage(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
  body: { content?: unknown; contentFormat?: unknown } | undefined,
  validationError?: Error,
): Promise<MessageView> {
  await roomForMember(ctx.db, roomId, actor);
  if (validationError) {
    // Content mistakes answer the same codes as on ingest (content_required, content_too_large,
    // invalid_content_format); any other schema failure (an unknown field) answers its own.
    validateContent(body?.content, body?.contentFormat);
    throw validationError;
  }
  const user = await ctx.db
    .selectFrom("users")
    .select("display_name")
    .where("id", "=", actor.userId)
    .executeTakeFirstOrThrow();
  const posted = await postMessage(ctx, {
    roomId,
    content: body?.content,
    contentFormat: body?.contentFormat,
    sender: {
      type: "user",
      userId: actor.userId,
      username: actor.username,
      displayName: user.display_name,
    },
  });
  return messageView(ctx.db, posted.id);
}

/** Newest first. Members see visible messages; admins (members or not) see every message. */
export async function listMessages(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
  query: { limit: number; cursor?: string | undefined },
): Promise<Page<MessageView>> {
  await roomForMember(ctx.db, roomId, actor, { allowAdmin: true });
  const before = decodeCursor(query.cursor);
  let select = selectMessageViews(ctx.db)
    .where("messages.room_id", "=", roomId)
    .orderBy("messages.id", "desc")
    .limit(query.limit + 1);
  if (actor.role !== "admin")
    select = select.where("messages.moderation_status", "not in", HIDDEN_STATUSES);
  if (before !== undefined) select = select.where("messages.id", "<", before);
  return toPage(await select.execute(), query.limit, toMessageView);
}

/**
 * One message of a room, for admins and bots (the event payloads carry no content, so receivers
 * fetch it here). A hidden message answers 404 to a bot, exactly as a message of another room.
 */
export async function getMessage(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
  messageId: number,
): Promise<MessageView> {
  await findLiveRoom(ctx.db, roomId);
  const row = await selectMessageViews(ctx.db)
    .where("messages.id", "=", messageId)
    .where("messages.room_id", "=", roomId)
    .executeTakeFirst();
  if (!row || (isHidden(row.moderation_status) && actor.role !== "admin")) {
    throw new AppError("not_found", `no message ${messageId} in room ${roomId}`);
  }
  return toMessageView(row);
}
