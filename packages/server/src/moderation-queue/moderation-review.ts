import type { ModerationFlag } from "@parley/client/wire";
import type { AppContext } from "../app-context.js";
import type { Principal } from "../auth/principal.js";
import { mentionCandidates, resolveMentions } from "../chat/mentions.js";
import { setModerationStatus } from "../chat/messages-repository.js";
import { renderMessage } from "../chat/rendering/render-message.js";
import { findUserRow } from "../chat/users-repository.js";
import { keysetSlice, type KeysetSlice } from "../db/keyset-slice.js";
import type { ModerationFlagsTable } from "../db/schema.js";
import { AppError } from "../errors/app-error.js";
import { eventData, isoTime } from "../events/event-catalogue.js";
import {
  findFlagViewRow,
  findReviewStatus,
  listFlagViewRows,
  markFlagReviewed,
  type FlagViewRow,
} from "./moderation-flags-repository.js";

export type ReviewStatus = ModerationFlagsTable["review_status"];

/** A flag as the API shows it: the wire's ModerationFlag. */
export type ModerationFlagView = ModerationFlag;

export function toFlagView(row: FlagViewRow): ModerationFlagView {
  return {
    id: row.id,
    messageId: row.message_id,
    roomId: row.room_id,
    roomName: row.room_name ?? null,
    authorId: row.author_id === null ? null : Number(row.author_id),
    authorUsername: row.author_username ?? null,
    category: row.category,
    score: Number(row.score),
    band: row.band,
    status: row.status,
    reviewStatus: row.review_status,
    createdAt: isoTime(row.created_at),
    reviewedAt: row.reviewed_at === null ? null : isoTime(row.reviewed_at),
    reviewedBy: row.reviewer_username,
    messageText:
      row.message_content === null ||
      row.message_content_format === null ||
      row.message_deleted_at !== null
        ? null
        : excerpt(renderMessage(row.message_content, row.message_content_format).text),
  };
}

const EXCERPT_LENGTH = 500;

/** At most 500 characters (code points), whitespace runs folded, `…` when cut. */
function excerpt(text: string): string {
  const folded = text.replace(/\s+/g, " ").trim();
  const chars = Array.from(folded);
  return chars.length <= EXCERPT_LENGTH
    ? folded
    : `${chars.slice(0, EXCERPT_LENGTH - 1).join("")}…`;
}

/** One flag: the target of a moderation event's `moderationQueueUrl`. */
export async function getFlag(ctx: AppContext, id: number): Promise<ModerationFlagView> {
  const row = await findFlagViewRow(ctx.db, id);
  if (!row) throw new AppError("not_found", `no moderation flag ${id}`);
  return toFlagView(row);
}

/** The review queue, oldest first; `status` narrows it to pending, approved or rejected flags. */
export async function listFlags(
  ctx: AppContext,
  query: { status?: ReviewStatus | undefined; afterId?: number | undefined; limit: number },
): Promise<KeysetSlice<ModerationFlagView>> {
  const rows = await listFlagViewRows(ctx.db, {
    reviewStatus: query.status,
    afterId: query.afterId,
    limit: query.limit,
  });
  return keysetSlice(rows, query.limit, toFlagView);
}

/**
 * Records an admin's decision on a pending flag. Approve makes the message visible (APPROVED); a
 * message that was QUARANTINED was never announced, so approving it fires MESSAGE_CREATED now, in
 * the same transaction. Reject hides it (REJECTED). A flag is reviewed once: the update only
 * matches a pending flag, so two admins deciding at once cannot both win.
 */
export async function reviewFlag(
  ctx: AppContext,
  actor: Principal,
  flagId: number,
  decision: "approved" | "rejected",
): Promise<ModerationFlagView> {
  return ctx.database.transaction(async (tx) => {
    const now = ctx.now();
    const flag = await markFlagReviewed(tx.db, flagId, {
      decision,
      reviewerId: actor.userId,
      now,
    });
    if (!flag) {
      const existing = await findReviewStatus(tx.db, flagId);
      if (!existing) throw new AppError("not_found", `no moderation flag ${flagId}`);
      throw new AppError(
        "flag_already_reviewed",
        `moderation flag ${flagId} was already ${existing}`,
        {
          reviewStatus: existing,
        },
      );
    }
    const message = await setModerationStatus(
      tx.db,
      flag.message_id,
      decision === "approved" ? "APPROVED" : "REJECTED",
    );
    // As when it was posted, its audience is the catalogue's (a DM's: its members' streams).
    // A message deleted meanwhile is gone: nothing to announce. A quarantined edit, approved, is
    // announced as the edit it was (the message itself was announced when it was posted).
    const released =
      decision === "approved" && flag.status === "QUARANTINED" && message.deleted_at === null;
    // What the held-back event would have said: the members the content mentions.
    const mentions = released
      ? await resolveMentions(
          tx.db,
          message.room_id,
          mentionCandidates(message.content, message.content_format),
        )
      : [];
    if (released && flag.revision > 1 && message.sender_user_id !== null) {
      await tx.emit(
        "MESSAGE_UPDATED",
        eventData.messageUpdated({
          roomId: message.room_id,
          messageId: message.id,
          revision: message.revision,
          editedBy: (await findUserRow(tx.db, message.sender_user_id))?.username ?? "",
          editedAt: message.edited_at ?? now,
          mentions,
        }),
      );
    } else if (released) {
      await tx.emit(
        "MESSAGE_CREATED",
        eventData.messageCreated({
          roomId: message.room_id,
          messageId: message.id,
          senderId: message.sender_user_id,
          createdAt: message.created_at,
          inboundWebhookId: message.inbound_webhook_id,
          threadId: message.thread_id,
          mentions,
        }),
      );
    }
    return toFlagView((await findFlagViewRow(tx.db, flagId))!);
  });
}
