import type { DiscordMessage } from "@parley/client/wire";
import type { AppContext } from "../../app-context.js";
import { findRoomMessageViewRow } from "../../chat/messages-repository.js";
import { isAppError } from "../../errors/app-error.js";
import { isoTime } from "../../events/event-catalogue.js";
import {
  DiscordApiError,
  invalidApiVersion,
  unknownMessage,
  unknownWebhook,
} from "./discord-api-error.js";
import { resolveIngestTarget, type ResolvedIngestTarget } from "./ingest.js";
import { hashIngestToken, INGEST_TOKEN_PATTERN } from "./ingest-token.js";

/** The API versions discord.js and Discord tools use: v6 to v10, as `v10` in the path. */
const API_VERSION = /^v(?:[6-9]|10)$/;

export function checkDiscordApiVersion(version: string): void {
  if (!API_VERSION.test(version)) throw invalidApiVersion();
}

/** A Discord snowflake as Parley reads it: a decimal id, a positive safe integer; else undefined. */
export function parseDiscordId(text: unknown): number | undefined {
  if (typeof text !== "string" || !/^[1-9][0-9]{0,15}$/.test(text)) return undefined;
  const id = Number(text);
  return Number.isSafeInteger(id) ? id : undefined;
}

/**
 * The inbound webhook that `id` and `token` name together. An unknown id, an unknown or disabled
 * token, or the token of another webhook: one answer, 404 Unknown Webhook (10015).
 */
export async function resolveDiscordTarget(
  ctx: AppContext,
  id: string,
  token: string,
): Promise<ResolvedIngestTarget> {
  const webhookId = parseDiscordId(id);
  if (webhookId === undefined || !INGEST_TOKEN_PATTERN.test(token)) throw unknownWebhook();
  let target: ResolvedIngestTarget;
  try {
    target = await resolveIngestTarget(ctx, hashIngestToken(token));
  } catch (error) {
    if (isAppError(error) && error.code === "not_found") throw unknownWebhook();
    throw error;
  }
  if (target.id !== webhookId) throw unknownWebhook();
  return target;
}

/**
 * Runs an ingest step on one of the webhook's messages, the webhook already resolved: a message it
 * did not post, or deleted (ingest's 404 and 410), is Discord's 404 Unknown Message (10008).
 */
export async function onDiscordMessage<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof DiscordApiError) throw error;
    if (
      isAppError(error) &&
      (error.code === "not_found" ||
        error.code === "message_not_found" ||
        error.code === "message_deleted")
    )
      throw unknownMessage();
    throw error;
  }
}

export interface DiscordMessageFields {
  id: number;
  roomId: number;
  content: string;
  createdAt: number;
  editedAt: number | null;
  authorName: string;
}

/** A Parley message in Discord's message-object shape (ids as strings, as Discord's snowflakes). */
export function discordMessageObject(
  target: Pick<ResolvedIngestTarget, "id">,
  message: DiscordMessageFields,
): DiscordMessage {
  const webhookId = String(target.id);
  return {
    id: String(message.id),
    type: 0,
    channel_id: String(message.roomId),
    content: message.content,
    timestamp: isoTime(message.createdAt),
    edited_timestamp: message.editedAt === null ? null : isoTime(message.editedAt),
    webhook_id: webhookId,
    // Discord's `avatar` is an image hash on its CDN, which a Parley avatar URL is not.
    author: { id: webhookId, username: message.authorName, avatar: null, bot: true },
    embeds: [],
    attachments: [],
    mentions: [],
    mention_roles: [],
    mention_everyone: false,
    pinned: false,
    tts: false,
    flags: 0,
  };
}

/** One of the webhook's own messages, not deleted; anything else is 404 Unknown Message. */
export async function readDiscordMessage(
  ctx: AppContext,
  target: ResolvedIngestTarget,
  messageId: number,
): Promise<DiscordMessage> {
  const row = await findRoomMessageViewRow(ctx.db, target.roomId, messageId);
  if (!row || row.inbound_webhook_id !== target.id || row.deleted_at !== null)
    throw unknownMessage();
  return discordMessageObject(target, {
    id: row.id,
    roomId: row.room_id,
    content: row.content,
    createdAt: row.created_at,
    editedAt: row.edited_at,
    authorName: row.sender_display_name,
  });
}
