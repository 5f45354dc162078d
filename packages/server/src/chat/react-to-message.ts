import type { AppContext } from "../app-context.js";
import type { Principal } from "../auth/principal.js";
import { AppError } from "../errors/app-error.js";
import { messageDeleted, messageNotFound } from "./message-lookup-errors.js";
import { eventData } from "../events/event-catalogue.js";
import { isHidden } from "./message-visibility.js";
import {
  findMessageForChange,
  findRoomForPost,
  isMemberForPost,
  touchMessage,
} from "./messages-repository.js";
import { parseReactionEmoji } from "./reaction-emoji.js";
import { deleteReaction, insertReaction, reactionEmojiState } from "./reactions-repository.js";
import { roomForMember } from "./room-access.js";

/** The most different emoji one message can carry. */
export const MAX_DISTINCT_REACTIONS = 20;

/**
 * A member adds (`present`) or takes back a reaction to a message of the room: idempotent, and
 * REACTION_ADDED / REACTION_REMOVED fire only when the state changes, with the message's updatedAt
 * moved (so `?updatedSince=` sees it). `rawEmoji`: one Unicode emoji or a shortcode name (else 400
 * invalid_emoji), stored as its emoji; a new emoji beyond the 20th is 400 too_many_reactions. The
 * message is read FOR UPDATE on PostgreSQL (SQLite has one writer), so reactions to one message
 * take turns: the 20-emoji check holds, and the primary key with ON CONFLICT DO NOTHING / DELETE
 * row counts says which request changed the state. 404 for a message not in the room or hidden
 * pending review, 410 message_deleted for a deleted one.
 */
export async function setReaction(
  ctx: AppContext,
  actor: Principal,
  target: { roomId: number; messageId: number; emoji: string },
  present: boolean,
): Promise<void> {
  const { roomId, messageId } = target;
  // Membership before the emoji is judged: a stranger learns nothing about the room.
  await roomForMember(ctx.db, roomId, actor);
  const emoji = parseReactionEmoji(target.emoji);
  await ctx.database.transaction(async (tx) => {
    const room = await findRoomForPost(tx.db, roomId);
    if (!room || room.deleted_at !== null) throw new AppError("not_found", `no room ${roomId}`);
    if (!(await isMemberForPost(tx.db, roomId, actor.userId)))
      throw new AppError("not_a_member", `you are not a member of room ${roomId}`);
    const message = await findMessageForChange(tx.db, roomId, messageId);
    if (!message || isHidden(message.moderation_status)) throw messageNotFound(roomId, messageId);
    if (message.deleted_at !== null) throw messageDeleted(messageId);

    const now = ctx.now();
    const reaction = { messageId, emoji, userId: actor.userId, now };
    let changed: boolean;
    if (present) {
      const state = await reactionEmojiState(tx.db, messageId, emoji);
      if (!state.used && state.distinct >= MAX_DISTINCT_REACTIONS)
        throw new AppError(
          "too_many_reactions",
          `message ${messageId} already has ${MAX_DISTINCT_REACTIONS} different reactions`,
        );
      changed = await insertReaction(tx.db, reaction);
    } else {
      changed = await deleteReaction(tx.db, reaction);
    }
    if (!changed) return;
    await touchMessage(tx.db, messageId, now);
    // Who hears it (in a DM, its members' streams only) is the catalogue's rule: EVENT_AUDIENCE.
    await tx.emit(
      present ? "REACTION_ADDED" : "REACTION_REMOVED",
      eventData.reaction({ roomId, messageId, emoji, username: actor.username }),
    );
  });
}
