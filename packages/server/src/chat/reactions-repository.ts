import { sql, type Kysely } from "kysely";
import type { Database } from "../db/schema.js";

/** How many usernames a message shows per emoji. */
export const REACTION_USERNAMES_SHOWN = 20;

/** One emoji's reactions to a message, as the message object shows them. */
export interface ReactionSummary {
  emoji: string;
  count: number;
  /** The first REACTION_USERNAMES_SHOWN who reacted, oldest first. */
  usernames: string[];
}

/**
 * Adds `userId`'s reaction; true when it was not there yet. The primary key (message, emoji, user)
 * and ON CONFLICT DO NOTHING make concurrent adds of the same reaction store it once, and the row
 * count tell the one that did.
 */
export async function insertReaction(
  db: Kysely<Database>,
  reaction: { messageId: number; emoji: string; userId: number; now: number },
): Promise<boolean> {
  const result = await db
    .insertInto("message_reactions")
    .values({
      message_id: reaction.messageId,
      emoji: reaction.emoji,
      user_id: reaction.userId,
      created_at: reaction.now,
    })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** Takes `userId`'s reaction back; true when it was there. */
export async function deleteReaction(
  db: Kysely<Database>,
  reaction: { messageId: number; emoji: string; userId: number },
): Promise<boolean> {
  const result = await db
    .deleteFrom("message_reactions")
    .where("message_id", "=", reaction.messageId)
    .where("emoji", "=", reaction.emoji)
    .where("user_id", "=", reaction.userId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** Whether anyone reacted to the message with `emoji`, and how many different emoji it has. */
export async function reactionEmojiState(
  db: Kysely<Database>,
  messageId: number,
  emoji: string,
): Promise<{ used: boolean; distinct: number }> {
  const row = await db
    .selectFrom("message_reactions")
    .select((eb) => [
      eb.fn.count<number | string>("emoji").distinct().as("distinct"),
      eb.fn.count<number | string>(eb.case().when("emoji", "=", emoji).then(1).end()).as("used"),
    ])
    .where("message_id", "=", messageId)
    .executeTakeFirstOrThrow();
  return { used: Number(row.used) > 0, distinct: Number(row.distinct) };
}

/**
 * The reactions of each of these messages, one entry per emoji in the order each was first used,
 * with its count and its first REACTION_USERNAMES_SHOWN usernames: one query along the primary
 * key, counting and numbering in the database (a window per message and emoji), so a message with
 * thousands of reactions sends back at most 20 rows per emoji.
 */
export async function listReactionSummaries(
  db: Kysely<Database>,
  messageIds: readonly number[],
): Promise<Map<number, ReactionSummary[]>> {
  const out = new Map<number, ReactionSummary[]>();
  if (messageIds.length === 0) return out;
  const { rows } = await sql<{
    message_id: number | string;
    emoji: string;
    username: string;
    n: number | string;
  }>`select "message_id", "emoji", "username", "n" from (
    select r."message_id", r."emoji", u."username",
      count(*) over (partition by r."message_id", r."emoji") as "n",
      min(r."created_at") over (partition by r."message_id", r."emoji") as "first_at",
      row_number() over (
        partition by r."message_id", r."emoji" order by r."created_at", r."user_id") as "k"
    from "message_reactions" r join "users" u on u."id" = r."user_id"
    where r."message_id" in (${sql.join(messageIds)})
  ) x where "k" <= ${REACTION_USERNAMES_SHOWN}
  order by "message_id", "first_at", "emoji", "k"`.execute(db);
  for (const row of rows) {
    const messageId = Number(row.message_id);
    let list = out.get(messageId);
    if (!list) out.set(messageId, (list = []));
    let last = list[list.length - 1];
    if (last?.emoji !== row.emoji) {
      last = { emoji: row.emoji, count: Number(row.n), usernames: [] };
      list.push(last);
    }
    last.usernames.push(row.username);
  }
  return out;
}
