import type { Kysely, Selectable } from "kysely";
import type { Database, ModerationFlagsTable } from "../db/schema.js";

/**
 * Queries on `moderation_flags`: one row per message AI moderation flagged or quarantined, written
 * in the post's transaction, then reviewed once by an admin. Every function takes the database or
 * a transaction.
 */
type ReviewStatus = ModerationFlagsTable["review_status"];

export interface NewModerationFlag {
  messageId: number;
  roomId: number;
  category: string;
  score: number;
  band: ModerationFlagsTable["band"];
  status: ModerationFlagsTable["status"];
  /** The message's revision that was judged (1: the post; more: an edit). */
  revision: number;
  now: number;
}

/** A new, pending flag; returns its id (the events' `flaggedMessageId`). */
export async function insertModerationFlag(
  db: Kysely<Database>,
  flag: NewModerationFlag,
): Promise<number> {
  const row = await db
    .insertInto("moderation_flags")
    .values({
      message_id: flag.messageId,
      room_id: flag.roomId,
      category: flag.category,
      score: flag.score,
      band: flag.band,
      status: flag.status,
      review_status: "pending",
      reviewed_by: null,
      reviewed_at: null,
      created_at: flag.now,
      revision: flag.revision,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

function selectFlagViewRows(db: Kysely<Database>) {
  return db
    .selectFrom("moderation_flags as f")
    .leftJoin("users as reviewer", "reviewer.id", "f.reviewed_by")
    .leftJoin("messages as m", "m.id", "f.message_id")
    .leftJoin("rooms as r", (join) =>
      join.onRef("r.id", "=", "f.room_id").on("r.deleted_at", "is", null),
    )
    .leftJoin("users as author", "author.id", "m.sender_user_id")
    .select([
      "r.name as room_name",
      "author.id as author_id",
      "author.username as author_username",
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
      "m.content as message_content",
      "m.content_format as message_content_format",
      "m.deleted_at as message_deleted_at",
    ]);
}

/** A flag with its reviewer's username. */
export type FlagViewRow = Awaited<
  ReturnType<ReturnType<typeof selectFlagViewRows>["executeTakeFirstOrThrow"]>
>;

export async function findFlagViewRow(
  db: Kysely<Database>,
  id: number,
): Promise<FlagViewRow | undefined> {
  return selectFlagViewRows(db).where("f.id", "=", id).executeTakeFirst();
}

/** Ascending ids after `afterId`, optionally of one review status; `limit + 1` rows. */
export async function listFlagViewRows(
  db: Kysely<Database>,
  page: { reviewStatus: ReviewStatus | undefined; afterId: number | undefined; limit: number },
): Promise<FlagViewRow[]> {
  let select = selectFlagViewRows(db)
    .orderBy("f.id", "asc")
    .limit(page.limit + 1);
  if (page.reviewStatus) select = select.where("f.review_status", "=", page.reviewStatus);
  if (page.afterId !== undefined) select = select.where("f.id", ">", page.afterId);
  return select.execute();
}

/**
 * The most recent flags of messages `authorId` wrote, newest first, but `exceptFlagId`: at most
 * `limit`.
 */
export async function listAuthorFlagViewRows(
  db: Kysely<Database>,
  authorId: number,
  exceptFlagId: number,
  limit: number,
): Promise<FlagViewRow[]> {
  return selectFlagViewRows(db)
    .where("m.sender_user_id", "=", authorId)
    .where("f.id", "!=", exceptFlagId)
    .orderBy("f.id", "desc")
    .limit(limit)
    .execute();
}

/**
 * Records a decision on a flag that is still pending. The update only matches a pending flag, so
 * of two admins deciding at once one wins; undefined for the other (and for an unknown id).
 */
export async function markFlagReviewed(
  db: Kysely<Database>,
  flagId: number,
  review: { decision: "approved" | "rejected"; reviewerId: number; now: number },
): Promise<
  | Pick<Selectable<ModerationFlagsTable>, "id" | "message_id" | "room_id" | "status" | "revision">
  | undefined
> {
  return db
    .updateTable("moderation_flags")
    .set({
      review_status: review.decision,
      reviewed_by: review.reviewerId,
      reviewed_at: review.now,
    })
    .where("id", "=", flagId)
    .where("review_status", "=", "pending")
    .returning(["id", "message_id", "room_id", "status", "revision"])
    .executeTakeFirst();
}

export async function findReviewStatus(
  db: Kysely<Database>,
  flagId: number,
): Promise<ReviewStatus | undefined> {
  const row = await db
    .selectFrom("moderation_flags")
    .select("review_status")
    .where("id", "=", flagId)
    .executeTakeFirst();
  return row?.review_status;
}
