import type { AppContext } from "../app-context.js";
import type { Tx } from "../db/unit-of-work.js";
import { eventData } from "../events/event-catalogue.js";
import { insertModerationFlag } from "../moderation-queue/moderation-flags-repository.js";
import type { ModerationOutcome } from "./screen-message-content.js";

/**
 * Queues a message moderation flagged or quarantined for review and fires its moderation event,
 * in the transaction that wrote the content it judged (a post or an edit).
 */
export async function flagForModeration(
  ctx: AppContext,
  tx: Tx,
  flagged: {
    messageId: number;
    roomId: number;
    senderId: number | null;
    /** The message's revision that was judged: 1 for a post. */
    revision: number;
    moderation: ModerationOutcome;
    now: number;
  },
): Promise<void> {
  const { moderation } = flagged;
  const flagId = await insertModerationFlag(tx.db, {
    messageId: flagged.messageId,
    roomId: flagged.roomId,
    category: moderation.category,
    score: moderation.score,
    band: moderation.band,
    status: moderation.status,
    revision: flagged.revision,
    now: flagged.now,
  });
  await tx.emit(
    moderation.status === "QUARANTINED"
      ? "MESSAGE_AUTO_MODERATION_QUARANTINED"
      : "MESSAGE_AUTO_MODERATION_FLAGGED",
    eventData.moderation(
      {
        flaggedMessageId: flagId,
        messageId: flagged.messageId,
        roomId: flagged.roomId,
        senderId: flagged.senderId,
        category: moderation.category,
        score: moderation.score,
        band: moderation.band,
        status: moderation.status,
        occurredAt: flagged.now,
      },
      ctx.config.publicBaseUrl,
    ),
  );
}
