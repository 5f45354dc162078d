import type { AppContext } from "../app-context.js";
import type { Principal } from "../auth/principal.js";
import type { ModerationFlagsTable } from "../db/schema.js";
import { AppError } from "../errors/app-error.js";
import { eventData, isoTime } from "../events/event-catalogue.js";
import { inTransaction, type Tx } from "../events/in-transaction.js";
import { decodeCursor, toPage, type Page } from "../http/pagination.js";

export type ReviewStatus = ModerationFlagsTable["review_status"];

export interface ModerationFlagView {
  id: number;
  messageId: number;
  roomId: number;
  category: string;
  score: number;
  band: ModerationFlagsTable["band"];
  /** What moderation did when the message was posted. */
  status: ModerationFlagsTable["status"];
  reviewStatus: ReviewStatus;
  createdAt: string;
  reviewedAt: string | null;
  /** The reviewing admin's username. */
  reviewedBy: string | null;
}

function selectFlagViews(ctx: AppContext | Tx) {
  return ctx.db
    .selectFrom("moderation_flags as f")
    .leftJoin("users as reviewer", "reviewer.id", "f.reviewed_by")
    .select([
      "f.id",
      "f.message_id",
      "f.room_id",
      "f.category",
      "f.score",
      "f.band",
      "f.status",
      "f.review_status",
      "f.created_at",
      "f.reviewed_at",
      "reviewer.username as reviewer_username",
    ]);
}

type FlagViewRow = Awaited<
  ReturnType<ReturnType<typeof selectFlagViews>["executeTakeFirstOrThrow"]>
>;

function toFlagView(row: FlagViewRow): ModerationFlagView {
  return {
    id: row.id,
    messageId: row.message_id,
    roomId: row.room_id,
    category: row.category,
    score: Number(row.score),
    band: row.band,
    status: row.status,
    reviewStatus: row.review_status,
    createdAt: isoTime(row.created_at),
    reviewedAt: row.reviewed_at === null ? null : isoTime(row.reviewed_at),
    reviewedBy: row.reviewer_username,
  };
}

/** One flag: the target of a moderation event's `moderationQueueUrl`. */
export async function getFlag(ctx: AppContext, id: number): Promise<ModerationFlagView> {
  const row = await selectFlagViews(ctx).where("f.id", "=", id).executeTakeFirst();
  if (!row) throw new AppError("not_found", `no moderation flag ${id}`);
  return toFlagView(row);
}

/** The review queue, oldest first; `status` narrows it to pending, approved or rejected flags. */
export async function listFlags(
  ctx: AppContext,
  query: { status?: ReviewStatus | undefined; limit: number; cursor?: string | undefined },
): Promise<Page<ModerationFlagView>> {
  const after = decodeCursor(query.cursor);
  let select = selectFlagViews(ctx)
    .orderBy("f.id", "asc")
    .limit(query.limit + 1);
  if (query.status) select = select.where("f.review_status", "=", query.status);
  if (after !== undefined) select = select.where("f.id", ">", after);
  return toPage(await select.execute(), query.limit, toFlagView);
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
  return inTransaction(ctx, async (tx) => {
    const now = ctx.now();
    const flag = await tx.db
      .updateTable("moderation_flags")
      .set({ review_status: decision, reviewed_by: actor.userId, reviewed_at: now })
      .where("id", "=", flagId)
      .where("review_status", "=", "pending")
      .returning(["id", "message_id", "room_id", "status"])
      .executeTakeFirst();
    if (!flag) {
      const existing = await tx.db
        .selectFrom("moderation_flags")
        .select("review_status")
        .where("id", "=", flagId)
        .executeTakeFirst();
      if (!existing) throw new AppError("not_found", `no moderation flag ${flagId}`);
      throw new AppError(
        "flag_already_reviewed",
        `moderation flag ${flagId} was already ${existing.review_status}`,
        {
          reviewStatus: existing.review_status,
        },
      );
    }
    const message = await tx.db
      .updateTable("messages")
      .set({ moderation_status: decision === "approved" ? "APPROVED" : "REJECTED" })
      .where("id", "=", flag.message_id)
      .returning(["id", "room_id", "sender_user_id", "inbound_webhook_id", "created_at"])
      .executeTakeFirstOrThrow();
    if (decision === "approved" && flag.status === "QUARANTINED") {
      await tx.emit(
        "MESSAGE_CREATED",
        eventData.messageCreated({
          roomId: message.room_id,
          messageId: message.id,
          senderId: message.sender_user_id,
          createdAt: message.created_at,
          inboundWebhookId: message.inbound_webhook_id,
        }),
      );
    }
    return toFlagView(
      await selectFlagViews(tx).where("f.id", "=", flagId).executeTakeFirstOrThrow(),
    );
  });
}
