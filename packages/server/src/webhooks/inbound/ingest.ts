import type { IngestResult } from "@parley/client/wire";
import type { AppContext } from "../../app-context.js";
import { postMessage } from "../../chat/post-message.js";
import { AppError, isAppError } from "../../errors/app-error.js";
import { isoTime } from "../../events/event-catalogue.js";
import { findIngestTarget, type IngestTarget } from "./inbound-repository.js";

export interface IngestMessage {
  /** Checked by postMessage() with the content rules, whether the caller checked it or not. */
  content: unknown;
  contentFormat?: unknown;
  /** Per-message sender overrides (Slack `username` / `icon_url`), already vetted by the caller. */
  displayName?: string | undefined;
  avatarUrl?: string | null | undefined;
}

/** What a post answers: the wire's IngestResult. */
export type IngestAnswer = IngestResult;

/**
 * The one answer for every token that cannot post: unknown, disabled, rotated away, deleted, or
 * whose room is gone. Same status, same body, so the answer tells nothing about which it was.
 */
export function ingestTokenNotFound(): AppError {
  return new AppError("not_found", "no enabled inbound webhook has this token");
}

/** The webhook a token (given by its hash) posts as; throws the single 404 otherwise. */
export async function resolveIngestTarget(
  ctx: AppContext,
  tokenHash: string | undefined,
): Promise<IngestTarget> {
  const target = tokenHash === undefined ? undefined : await findIngestTarget(ctx.db, tokenHash);
  if (!target) throw ingestTokenNotFound();
  return target;
}

/**
 * Posts through the same postMessage() as every other path: validation, DLP, sanitization,
 * moderation, and the message with its MESSAGE_CREATED in one transaction.
 */
export async function ingestMessage(
  ctx: AppContext,
  target: IngestTarget,
  message: IngestMessage,
): Promise<IngestAnswer> {
  try {
    const posted = await postMessage(ctx, {
      roomId: target.roomId,
      content: message.content,
      contentFormat: message.contentFormat,
      sender: {
        type: "integration",
        inboundWebhookId: target.id,
        displayName: message.displayName ?? target.displayName,
        avatarUrl: message.avatarUrl !== undefined ? message.avatarUrl : target.avatarUrl,
      },
    });
    return { messageId: posted.id, timestamp: isoTime(posted.createdAt) };
  } catch (error) {
    // The room was deleted between the lookup and the insert: answer as for any dead token.
    if (isAppError(error) && error.code === "not_found") throw ingestTokenNotFound();
    throw error;
  }
}
