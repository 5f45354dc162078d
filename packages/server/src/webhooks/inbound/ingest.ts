import type { IngestEditResult, IngestResult } from "@parley/client/wire";
import type { AppContext } from "../../app-context.js";
import { deleteMessage } from "../../chat/delete-message.js";
import { checkMessageEditable, editMessage, type MessageEditor } from "../../chat/edit-message.js";
import { postMessage, type PostedMessage } from "../../chat/post-message.js";
import { AppError, isAppError } from "../../errors/app-error.js";
import { isoTime } from "../../events/event-catalogue.js";
import type { RequestTrace } from "../../tracing/request-trace.js";
import type { IdempotencyClaim, KeptAnswer } from "./idempotency/run-idempotent.js";
import { findIngestTarget, type IngestTarget } from "./inbound-repository.js";

export interface IngestMessage {
  /** Checked by postMessage() with the content rules, whether the caller checked it or not. */
  content: unknown;
  contentFormat?: unknown;
  /** A reply's thread (checked by postMessage(): else invalid_thread); absent at top level. */
  threadId?: unknown;
  /** Per-message sender overrides (Slack `username` / `icon_url`), already vetted by the caller. */
  displayName?: string | undefined;
  avatarUrl?: string | null | undefined;
  /** The trace of the request that posts, handed down to the unit of work (request-trace.ts). */
  trace?: RequestTrace | undefined;
  /** The content is Parley's formatting of a sender's event, its links Parley's (postMessage). */
  composedLinks?: boolean;
}

/** What a post answers: the wire's IngestResult. */
export type IngestAnswer = IngestResult;

/**
 * A keyed request's post: the idempotency claim it must win, written with it, and the answer the
 * request gives for the post (kept with the claim, for replays).
 */
export interface IngestOnce {
  claim: IdempotencyClaim;
  answer: (posted: IngestAnswer) => KeptAnswer;
}

const answerOf = (posted: PostedMessage): IngestAnswer => ({
  messageId: posted.id,
  timestamp: isoTime(posted.createdAt),
});

/**
 * The one answer for every token that cannot post: unknown, disabled, rotated away, deleted, or
 * whose room is gone. Same status, same body, so the answer tells nothing about which it was.
 */
export function ingestTokenNotFound(): AppError {
  return new AppError("not_found", "no enabled inbound webhook has this token");
}

/**
 * How long ingest reuses a token's lookup (its webhook, room, name, avatar, overrides setting).
 * Whether the token may still post is not cached: the post checks in its own transaction that
 * the token is still its webhook's enabled token, so disabling, rotating or deleting takes effect
 * at once, in every process. A change of name, avatar or overrides made through this process's
 * API clears the cache; made by another process (the CLI, a second server) it shows within this.
 */
export const INGEST_TARGET_TTL_MS = 1_000;
const MAX_CACHED_TARGETS = 10_000;

/** A token's webhook, and the token (by its hash) that the post checks is still current. */
export interface ResolvedIngestTarget extends IngestTarget {
  tokenHash: string;
}

interface CachedTarget {
  target: ResolvedIngestTarget;
  until: number;
}
const targetCaches = new WeakMap<AppContext["db"], Map<string, CachedTarget>>();

/** Forgets every cached lookup (the admin API changed an inbound webhook). */
export function forgetIngestTargets(ctx: AppContext): void {
  targetCaches.get(ctx.db)?.clear();
}

/**
 * The webhook a token (given by its hash) posts as; throws the single 404 otherwise. Found
 * tokens are cached for INGEST_TARGET_TTL_MS; unknown ones are not (a new webhook posts at once).
 */
export async function resolveIngestTarget(
  ctx: AppContext,
  tokenHash: string | undefined,
): Promise<ResolvedIngestTarget> {
  if (tokenHash === undefined) throw ingestTokenNotFound();
  let cache = targetCaches.get(ctx.db);
  if (!cache) targetCaches.set(ctx.db, (cache = new Map()));
  const now = performance.now();
  const cached = cache.get(tokenHash);
  if (cached && cached.until > now) return cached.target;
  const found = await findIngestTarget(ctx.db, tokenHash);
  if (!found) {
    cache.delete(tokenHash);
    throw ingestTokenNotFound();
  }
  const target = { ...found, tokenHash };
  if (cache.size >= MAX_CACHED_TARGETS) cache.clear();
  cache.set(tokenHash, { target, until: now + INGEST_TARGET_TTL_MS });
  return target;
}

/**
 * Posts through the same postMessage() as every other path: validation, DLP, sanitization,
 * moderation, and the message with its MESSAGE_CREATED in one transaction; with `once`, its
 * idempotency claim and kept answer in the same unit of work.
 */
export async function ingestMessage(
  ctx: AppContext,
  target: ResolvedIngestTarget,
  message: IngestMessage,
  once?: IngestOnce,
): Promise<IngestAnswer> {
  try {
    const posted = await postMessage(ctx, {
      roomId: target.roomId,
      content: message.content,
      contentFormat: message.contentFormat,
      threadId: message.threadId,
      sender: {
        type: "integration",
        inboundWebhookId: target.id,
        displayName: message.displayName ?? target.displayName,
        avatarUrl: message.avatarUrl !== undefined ? message.avatarUrl : target.avatarUrl,
        tokenHash: target.tokenHash,
      },
      claim: once?.claim.post((posted) => once.answer(answerOf(posted))),
      trace: message.trace,
      composedLinks: message.composedLinks,
    });
    return answerOf(posted);
  } catch (error) {
    // The room was deleted, or the token disabled, rotated or deleted, since the lookup: answer as
    // for any dead token.
    if (isAppError(error) && error.code === "not_found") throw ingestTokenNotFound();
    throw error;
  }
}

/** The webhook as the author of its messages, for an edit or a delete through ingest. */
function webhookAuthor(target: ResolvedIngestTarget): MessageEditor & { type: "integration" } {
  return {
    type: "integration",
    inboundWebhookId: target.id,
    name: target.displayName,
    tokenHash: target.tokenHash,
  };
}

/** A not_found (a message it did not post, a room or token gone) answers as a dead token does. */
async function asIngest<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isAppError(error) && error.code === "not_found") throw ingestTokenNotFound();
    throw error;
  }
}

/**
 * Whether the webhook may edit that message (one it posted, in its room), answered before the
 * content is read: any other id is 404, as an unknown token.
 */
export async function checkIngestEditable(
  ctx: AppContext,
  target: ResolvedIngestTarget,
  messageId: number,
): Promise<void> {
  await asIngest(() =>
    checkMessageEditable(ctx, { roomId: target.roomId, messageId, editor: webhookAuthor(target) }),
  );
}

/**
 * The webhook edits a message it posted, through the same editMessage() as a user's edit (content
 * rules, DLP, moderation, a revision, MESSAGE_UPDATED with editedBy its display name).
 */
export async function editIngestMessage(
  ctx: AppContext,
  target: ResolvedIngestTarget,
  messageId: number,
  message: { content: unknown; contentFormat?: unknown },
): Promise<IngestEditResult> {
  const edited = await asIngest(() =>
    editMessage(ctx, {
      roomId: target.roomId,
      messageId,
      content: message.content,
      contentFormat: message.contentFormat,
      editor: webhookAuthor(target),
    }),
  );
  return { messageId, revision: edited.revision, editedAt: isoTime(edited.editedAt) };
}

/** The webhook deletes a message it posted, through the same deleteMessage() as a user's delete. */
export async function deleteIngestMessage(
  ctx: AppContext,
  target: ResolvedIngestTarget,
  messageId: number,
): Promise<void> {
  await asIngest(() => deleteMessage(ctx, webhookAuthor(target), target.roomId, messageId));
}
