import type { FlagContext } from "@parley/client/wire";
import type { AppContext } from "../app-context.js";
import { listMessageNeighbours } from "../chat/messages-service.js";
import { AppError } from "../errors/app-error.js";
import { findFlagViewRow, listAuthorFlagViewRows } from "./moderation-flags-repository.js";
import { toFlagView } from "./moderation-review.js";

/** Messages on each side of the flagged one. */
const NEIGHBOURS = 5;
/** The author's other flags shown. */
const AUTHOR_FLAGS = 10;

/**
 * What a reviewer judges a flag by, beyond the message itself: the conversation around it (a
 * reply can be harmless or not depending on what it answers) and whether its author was flagged
 * before (one slip, or a pattern).
 */
export async function flagContext(ctx: AppContext, flagId: number): Promise<FlagContext> {
  const flag = await findFlagViewRow(ctx.db, flagId);
  if (!flag) throw new AppError("not_found", `no moderation flag ${flagId}`);
  const [neighbours, authorFlags] = await Promise.all([
    listMessageNeighbours(ctx, flag.message_id, NEIGHBOURS),
    flag.author_id === null
      ? Promise.resolve([])
      : listAuthorFlagViewRows(ctx.db, Number(flag.author_id), flag.id, AUTHOR_FLAGS),
  ]);
  return { ...neighbours, authorFlags: authorFlags.map(toFlagView) };
}
