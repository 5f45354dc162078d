import type { AppContext } from "../app-context.js";
import { writesInOneStatement } from "../db/dialect.js";
import type { StatementUnit } from "../db/unit-of-work.js";
import { AppError } from "../errors/app-error.js";
import { eventData } from "../events/event-catalogue.js";
import { insertModerationFlag } from "../moderation-queue/moderation-flags-repository.js";
import { scanForDlp } from "../safety/dlp/scan-for-dlp.js";
import {
  decideModeration,
  type ModerationBand,
  type ModerationStatus,
} from "../safety/moderation/moderation-decision.js";
import { validateMessageContent } from "./content-rules.js";
import {
  findRoomForIngestPost,
  findRoomForPost,
  insertMessageRow,
  isMemberForPost,
  POST_MESSAGE_ANSWER,
  POST_MESSAGE_BATCH_ANSWER,
  POST_MESSAGE_BATCH_CTES,
  POST_MESSAGE_COLUMNS,
  POST_MESSAGE_TYPES,
  POST_MESSAGE_CTES,
  postStatementValues,
  type NewMessage,
  type PostMessageAnswer,
} from "./messages-repository.js";
import { renderMessage, type ContentFormat } from "./rendering/render-message.js";
import { sanitizeHtml } from "./rendering/sanitize-html.js";

export type MessageSender =
  | { type: "user"; userId: number; username: string; displayName: string }
  | {
      type: "integration";
      inboundWebhookId: number;
      displayName: string;
      avatarUrl: string | null;
      /**
       * The hash of the token it posts with (ingest): checked in the post's own transaction, so a
       * token disabled, rotated or deleted since it was looked up (ingest caches the lookup) posts
       * nothing and the post answers not_found.
       */
      tokenHash?: string;
    };

export interface PostMessageInput {
  roomId: number;
  /** Unvalidated: checked here by the content rules, so every path answers the same codes. */
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

/** The plain text readers will see; content that cannot be rendered is refused (400), not stored. */
function renderOrRefuse(stored: string, format: ContentFormat): string {
  try {
    return renderMessage(stored, format).text;
  } catch {
    throw new AppError("content_not_renderable", "the content could not be rendered");
  }
}

/**
 * Classifies the text a reader sees and, when it differs, the raw input too; the higher score
 * decides, so neither markup that splits a word nor markup that joins one slips past.
 */
async function moderate(
  ctx: AppContext,
  readerText: string,
  raw: string,
): Promise<ModerationOutcome | null> {
  const classifier = ctx.safety.classifier;
  if (!classifier) return null;
  try {
    const results = await Promise.all(
      readerText === raw
        ? [classifier.classify(raw)]
        : [readerText, raw].map((text) => classifier.classify(text)),
    );
    const result = results.reduce((a, b) => (b.score > a.score ? b : a));
    const decision = decideModeration(result, ctx.safety.thresholds);
    return decision ? { category: result.category, score: result.score, ...decision } : null;
  } catch {
    // The classifier is advisory: when its provider is down, messages still flow (fail open).
    return null;
  }
}

function roomNotFound(roomId: number): AppError {
  return new AppError("not_found", `no room ${roomId}`);
}

/**
 * Posts a message into a room: validation, HTML sanitization, DLP on the raw input and on the
 * rendered text (blocked content is never stored), AI moderation on both, then ONE unit of work
 * that writes the message and emits its events (on PostgreSQL, when moderation lets it through,
 * one statement: see docs/architecture.md, "The write path of a post").
 * MESSAGE_CREATED fires for visible messages (its audience, in the catalogue, keeps a DM's from
 * integrations); a QUARANTINED message is hidden pending review and fires only its moderation event (MESSAGE_CREATED follows if a reviewer approves it).
 */
export async function postMessage(
  ctx: AppContext,
  input: PostMessageInput,
): Promise<PostedMessage> {
  const { content, format } = validateMessageContent(input.content, input.contentFormat);
  const stored = format === "html" ? sanitizeHtml(content) : content;
  // What a reader sees: entities decoded, markup and markdown gone. DLP and moderation read it as
  // well as the raw input, so "&#52;111 1111 1111 1111" or "4111 1111 1111 111**1**" is the card
  // number it shows, and "k**i**ll" the word it shows.
  const readerText = renderOrRefuse(stored, format);
  const match =
    scanForDlp(ctx.safety.dlp, content) ??
    (readerText === content ? null : scanForDlp(ctx.safety.dlp, readerText));
  if (match) {
    throw new AppError(
      "dlp_blocked",
      `the message matches the DLP rule "${match.ruleId}" (${match.description})`,
      {
        ruleId: match.ruleId,
      },
    );
  }
  // Classify outside the transaction: a remote provider must not hold a database connection.
  const moderation = await moderate(ctx, readerText, content);

  const sender = input.sender;
  const senderId = sender.type === "user" ? sender.userId : null;
  const tokenHash = sender.type === "integration" ? (sender.tokenHash ?? null) : null;
  const row = (now: number): Omit<NewMessage, "moderation_status"> => ({
    room_id: input.roomId,
    sender_user_id: senderId,
    inbound_webhook_id: sender.type === "integration" ? sender.inboundWebhookId : null,
    sender_display_name: sender.displayName,
    sender_avatar_url: sender.type === "integration" ? sender.avatarUrl : null,
    content: stored,
    content_format: format,
    created_at: now,
  });

  // The common case on PostgreSQL, a post moderation let through: one statement, one round trip,
  // sharing its commit with the posts that arrive with it. The same checks, rows, events and
  // errors as the transaction below, which SQLite (in process, no round trips) and the rarer
  // posts take.
  if (!moderation && writesInOneStatement(ctx.database.dialect)) {
    const now = ctx.now();
    return ctx.database.statement(
      postStatement(input, postStatementValues(row(now), tokenHash), now),
    );
  }

  return ctx.database.transaction(async (tx) => {
    const room =
      tokenHash !== null && sender.type === "integration"
        ? await findRoomForIngestPost(tx.db, input.roomId, sender.inboundWebhookId, tokenHash)
        : await findRoomForPost(tx.db, input.roomId);
    if (!room || room.deleted_at !== null) throw roomNotFound(input.roomId);
    if (sender.type === "user") {
      if (!(await isMemberForPost(tx.db, input.roomId, sender.userId)))
        throw new AppError("not_a_member", `you are not a member of room ${input.roomId}`);
    }
    // A token disabled, rotated or deleted since ingest looked it up: the same answer.
    if ("tokenCurrent" in room && !room.tokenCurrent) throw roomNotFound(input.roomId);
    const now = ctx.now();
    const message = await insertMessageRow(tx.db, {
      ...row(now),
      moderation_status: moderation?.status ?? "none",
    });

    // Who hears it (in a DM, its members' streams only) is the catalogue's rule: EVENT_AUDIENCE.
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
      const flagId = await insertModerationFlag(tx.db, {
        messageId: message.id,
        roomId: input.roomId,
        category: moderation.category,
        score: moderation.score,
        band: moderation.band,
        status: moderation.status,
        now,
      });
      await tx.emit(
        moderation.status === "QUARANTINED"
          ? "MESSAGE_AUTO_MODERATION_QUARANTINED"
          : "MESSAGE_AUTO_MODERATION_FLAGGED",
        eventData.moderation(
          {
            flaggedMessageId: flagId,
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

/**
 * The post as one statement (PostgreSQL, see ParleyDatabase.statement), for `values` =
 * postStatementValues. test/unit/chat/post-statement.test.ts prints the SQL it assembles to.
 */
export function postStatement(
  input: PostMessageInput,
  values: unknown[],
  now: number,
): StatementUnit<PostMessageAnswer, PostedMessage> {
  const sender = input.sender;
  const senderId = sender.type === "user" ? sender.userId : null;
  return {
    name: "parley_post_message",
    ctes: POST_MESSAGE_CTES,
    values,
    answer: POST_MESSAGE_ANSWER,
    combined: {
      columns: POST_MESSAGE_COLUMNS,
      types: POST_MESSAGE_TYPES,
      ctes: POST_MESSAGE_BATCH_CTES,
      answer: POST_MESSAGE_BATCH_ANSWER,
    },
    emit: {
      event: "MESSAGE_CREATED",
      data: (messageId) =>
        eventData.messageCreated({
          roomId: input.roomId,
          messageId,
          senderId,
          createdAt: now,
          inboundWebhookId: sender.type === "integration" ? sender.inboundWebhookId : null,
        }),
    },
    settle(answer) {
      if (answer.id === null || answer.created_at === null) {
        if (answer.room_open && sender.type === "user")
          throw new AppError("not_a_member", `you are not a member of room ${input.roomId}`);
        throw roomNotFound(input.roomId);
      }
      return {
        id: answer.id,
        roomId: input.roomId,
        createdAt: answer.created_at,
        moderationStatus: "none",
      };
    },
  };
}
