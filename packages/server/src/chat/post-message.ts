import type { AppContext } from "../app-context.js";
import { compiledOnce } from "../db/compiled-query.js";
import type { MessagesTable } from "../db/schema.js";
import { AppError } from "../errors/app-error.js";
import { eventData } from "../events/event-catalogue.js";
import { inTransaction } from "../events/in-transaction.js";
import { scanForDlp } from "../safety/dlp/scan-for-dlp.js";
import {
  decideModeration,
  type ModerationBand,
  type ModerationStatus,
} from "../safety/moderation/moderation-decision.js";
import type { ContentFormat } from "./rendering/render-message.js";
import { sanitizeHtml } from "./rendering/sanitize-html.js";
import { toPlainText } from "./rendering/to-plain-text.js";

/** Spec limit: `content` is at most 16 KB, counted in UTF-8 bytes, not characters. */
export const MAX_CONTENT_BYTES = 16_384;

export type MessageSender =
  | { type: "user"; userId: number; username: string; displayName: string }
  | {
      type: "integration";
      inboundWebhookId: number;
      displayName: string;
      avatarUrl: string | null;
    };

export interface PostMessageInput {
  roomId: number;
  /** Unvalidated: checked here so every path (API, ingest, CLI) answers the same codes. */
  content: unknown;
  contentFormat?: unknown;
  sender: MessageSender;
}

export interface PostedMessage {
  id: number;
  roomId: number;
  createdAt: number;
  moderationStatus: "none" | ModerationStatus;
}

interface ModerationOutcome {
  category: string;
  score: number;
  band: ModerationBand;
  status: ModerationStatus;
}

// The statements of every post, built and compiled once (Kysely's building and compiling cost
// more than SQLite running them).
const selectRoom = compiledOnce<{ id: number; deleted_at: number | null }, { roomId: number }>(
  (db, slot) =>
    db.selectFrom("rooms").select(["id", "deleted_at"]).where("id", "=", slot("roomId")),
);
const selectMember = compiledOnce<{ user_id: number }, { roomId: number; userId: number }>(
  (db, slot) =>
    db
      .selectFrom("room_members")
      .select("user_id")
      .where("room_id", "=", slot("roomId"))
      .where("user_id", "=", slot("userId")),
);
type NewMessage = Omit<MessagesTable, "id">;
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

/** Validates `content`/`contentFormat` and returns them typed; throws the spec's 400 codes. */
export function validateContent(
  content: unknown,
  contentFormat: unknown,
): { content: string; format: ContentFormat } {
  if (contentFormat !== undefined && contentFormat !== "markdown" && contentFormat !== "html") {
    throw new AppError("invalid_content_format", 'contentFormat must be "markdown" or "html"');
  }
  if (typeof content !== "string" || content.length === 0) {
    throw new AppError("content_required", "content must be a non-empty string");
  }
  const bytes = Buffer.byteLength(content, "utf8");
  if (bytes > MAX_CONTENT_BYTES) {
    throw new AppError(
      "content_too_large",
      `content is ${bytes} UTF-8 bytes; the limit is ${MAX_CONTENT_BYTES}`,
      {
        limit: MAX_CONTENT_BYTES,
        size: bytes,
      },
    );
  }
  return { content, format: (contentFormat ?? "markdown") as ContentFormat };
}

async function moderate(ctx: AppContext, text: string): Promise<ModerationOutcome | null> {
  if (!ctx.safety.classifier) return null;
  try {
    const result = await ctx.safety.classifier.classify(text);
    const decision = decideModeration(result, ctx.safety.thresholds);
    return decision ? { category: result.category, score: result.score, ...decision } : null;
  } catch {
    // The classifier is advisory: when its provider is down, messages still flow (fail open).
    return null;
  }
}

/**
 * Posts a message into a room: validation, DLP (blocked content is never stored), HTML
 * sanitization, AI moderation, then ONE transaction that writes the message and emits its events.
 * MESSAGE_CREATED fires for visible messages; a QUARANTINED message is hidden pending review and
 * fires only its moderation event (MESSAGE_CREATED follows if a reviewer approves it).
 */
export async function postMessage(
  ctx: AppContext,
  input: PostMessageInput,
): Promise<PostedMessage> {
  const { content, format } = validateContent(input.content, input.contentFormat);
  const match = scanForDlp(ctx.safety.dlp, content);
  if (match) {
    throw new AppError(
      "dlp_blocked",
      `the message matches the DLP rule "${match.ruleId}" (${match.description})`,
      {
        ruleId: match.ruleId,
      },
    );
  }
  const stored = format === "html" ? sanitizeHtml(content) : content;
  // Classify outside the transaction: a remote provider must not hold a database connection.
  const moderation = await moderate(ctx, format === "html" ? toPlainText(stored) : content);

  return inTransaction(ctx, async (tx) => {
    const room = (await selectRoom(tx.db, { roomId: input.roomId })).rows[0];
    if (!room || room.deleted_at !== null)
      throw new AppError("not_found", `no room ${input.roomId}`);
    const sender = input.sender;
    if (sender.type === "user") {
      const member = (await selectMember(tx.db, { roomId: input.roomId, userId: sender.userId }))
        .rows[0];
      if (!member)
        throw new AppError("not_a_member", `you are not a member of room ${input.roomId}`);
    }
    const now = ctx.now();
    const message = (
      await insertMessage(tx.db, {
        room_id: input.roomId,
        sender_user_id: sender.type === "user" ? sender.userId : null,
        inbound_webhook_id: sender.type === "integration" ? sender.inboundWebhookId : null,
        sender_display_name: sender.displayName,
        sender_avatar_url: sender.type === "integration" ? sender.avatarUrl : null,
        content: stored,
        content_format: format,
        moderation_status: moderation?.status ?? "none",
        created_at: now,
      })
    ).rows[0]!;
    const senderId = sender.type === "user" ? sender.userId : null;

    if (moderation?.status !== "QUARANTINED") {
      await tx.emit(
        "MESSAGE_CREATED",
        eventData.messageCreated({
          roomId: input.roomId,
          messageId: message.id,
          senderId,
          createdAt: message.created_at,
          inboundWebhookId: sender.type === "integration" ? sender.inboundWebhookId : null,
        }),
      );
    }
    if (moderation) {
      const flag = await tx.db
        .insertInto("moderation_flags")
        .values({
          message_id: message.id,
          room_id: input.roomId,
          category: moderation.category,
          score: moderation.score,
          band: moderation.band,
          status: moderation.status,
          review_status: "pending",
          reviewed_by: null,
          reviewed_at: null,
          created_at: now,
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      await tx.emit(
        moderation.status === "QUARANTINED"
          ? "MESSAGE_AUTO_MODERATION_QUARANTINED"
          : "MESSAGE_AUTO_MODERATION_FLAGGED",
        eventData.moderation(
          {
            flaggedMessageId: flag.id,
            messageId: message.id,
            roomId: input.roomId,
            senderId,
            category: moderation.category,
            score: moderation.score,
            band: moderation.band,
            status: moderation.status,
            occurredAt: now,
          },
          ctx.config.publicBaseUrl,
        ),
      );
    }
    return {
      id: message.id,
      roomId: input.roomId,
      createdAt: message.created_at,
      moderationStatus: moderation?.status ?? "none",
    };
  });
}
