import type { SearchHit } from "@parley/client/wire";
import type { AppContext } from "../app-context.js";
import type { Principal } from "../auth/principal.js";
import { roomForMember } from "../chat/room-access.js";
import { findUserRowByUsername } from "../chat/users-repository.js";
import { keysetSlice, type KeysetSlice } from "../db/keyset-slice.js";
import { isoTime } from "../events/event-catalogue.js";
import { parseSearchQuery } from "./search-query.js";
import { findSearchRows, listSearchableRoomIds } from "./search-repository.js";
import { searchSnippet } from "./search-snippet.js";

export interface SearchParams {
  q: string | undefined;
  /** Only this room or DM (the user must be a member: else 404 / 403, as its messages). */
  roomId?: number | undefined;
  /** Only messages sent by this username (a leading "@" is allowed). */
  from?: string | undefined;
  /** Only messages created before this time (epoch ms). */
  before?: number | undefined;
  /** Continue after the message with this id (the cursor). */
  cursorId?: number | undefined;
  limit: number;
}

/**
 * Searches the messages of the rooms and DMs `actor` is a member of, newest first. An admin is no
 * exception: what an admin finds is what they could read as a member, never another room's or
 * another pair's DM. Deleted, quarantined and rejected messages are never found (the index does
 * not hold them). Each hit's snippet is the message's text, HTML-escaped, with the matched words
 * in `<mark>`.
 */
export async function searchMessages(
  ctx: AppContext,
  actor: Principal,
  params: SearchParams,
): Promise<KeysetSlice<SearchHit>> {
  const terms = parseSearchQuery(params.q);
  if (params.roomId !== undefined) await roomForMember(ctx.db, params.roomId, actor);
  const roomIds = await listSearchableRoomIds(ctx.db, actor.userId, params.roomId);
  let senderId: number | undefined;
  if (params.from !== undefined) {
    const sender = await findUserRowByUsername(ctx.db, params.from.replace(/^@/, ""));
    // Nobody by that name sent anything.
    if (!sender) return { items: [], hasMore: false };
    senderId = Number(sender.id);
  }
  if (roomIds.length === 0) return { items: [], hasMore: false };
  // Whatever was posted before this search is found (SQLite indexes posts after their commit).
  await ctx.searchIndexer.catchUp();
  const rows = await findSearchRows(ctx.db, {
    terms,
    roomIds,
    beforeId: params.cursorId,
    senderId,
    createdBefore: params.before,
    limit: params.limit + 1,
  });
  return keysetSlice(rows, params.limit, (row) => ({
    roomId: row.room_id,
    messageId: row.id,
    threadId: row.thread_id,
    createdAt: isoTime(row.created_at),
    snippet: searchSnippet(row.content_text, terms),
  }));
}
