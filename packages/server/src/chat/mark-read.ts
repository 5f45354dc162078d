import type { ReadMarker } from "@parley/client/wire";
import type { AppContext } from "../app-context.js";
import type { Principal } from "../auth/principal.js";
import { AppError } from "../errors/app-error.js";
import { messageNotFound } from "./message-lookup-errors.js";
import { roomForMember } from "./room-access.js";
import { advanceReadMarker, findReadMarkerRow, isMessageOfRoom } from "./rooms-repository.js";

/** Tells the user's live-stream connections, on every process, that their marker moved. */
export type AnnounceRead = (read: { username: string; roomId: number; messageId: number }) => void;

/**
 * Moves the caller's read marker of a room forward to `messageId` (a message of that room), never
 * back, and answers the marker with the counts after it. When it moved, `announce` tells the
 * user's connections (`{"type": "read", ...}` frames), so their other tabs follow. Members only
 * (a private room answers a non-member 404, as for no room).
 */
export async function markRead(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
  messageId: number,
  announce: AnnounceRead,
): Promise<ReadMarker> {
  await roomForMember(ctx.db, roomId, actor);
  const moved = await advanceReadMarker(ctx.db, roomId, actor.userId, messageId);
  if (!moved && !(await isMessageOfRoom(ctx.db, roomId, messageId)))
    throw messageNotFound(roomId, messageId);
  const marker = await findReadMarkerRow(ctx.db, roomId, actor.userId);
  // Left the room between the check and now: as if the check had seen it.
  if (!marker) throw new AppError("not_a_member", `you are not a member of room ${roomId}`);
  const lastReadMessageId = Number(marker.last_read_message_id);
  if (moved) announce({ username: actor.username, roomId, messageId: lastReadMessageId });
  return {
    roomId,
    lastReadMessageId,
    unreadCount: Number(marker.unread_count ?? 0),
    mentionCount: Number(marker.mention_count ?? 0),
  };
}
