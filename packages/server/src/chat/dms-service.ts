import type { AppContext } from "../app-context.js";
import type { Principal } from "../auth/principal.js";
import { isUniqueViolation } from "../db/dialect.js";
import { AppError } from "../errors/app-error.js";
import { eventData } from "../events/event-catalogue.js";
import { inTransaction } from "../events/in-transaction.js";
import { findLiveRoom, isMember } from "./room-access.js";
import { roomView, validateRoomName, type RoomView } from "./rooms-service.js";

/** The pair's key, the same whichever of the two asks. */
function dmKey(a: number, b: number): string {
  return a < b ? `${a}:${b}` : `${b}:${a}`;
}

async function findOpenDm(ctx: AppContext, key: string): Promise<RoomView | undefined> {
  const row = await ctx.db
    .selectFrom("rooms")
    .select("id")
    .where("dm_key", "=", key)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  return row ? roomView(ctx.db, row.id) : undefined;
}

/**
 * Opens the direct message between the caller and another active user, or returns the one that
 * is already open between them (`created: false`). No event fires: a DM becomes visible to
 * integrations only when it is promoted to a room.
 */
export async function openDm(
  ctx: AppContext,
  actor: Principal,
  userId: number,
): Promise<{ room: RoomView; created: boolean }> {
  if (userId === actor.userId)
    throw new AppError("cannot_dm_self", "a direct message needs another user");
  const other = await ctx.db
    .selectFrom("users")
    .select(["id", "status"])
    .where("id", "=", userId)
    .executeTakeFirst();
  if (!other || other.status !== "active")
    throw new AppError("not_found", `no active user ${userId}`);
  const key = dmKey(actor.userId, userId);
  const existing = await findOpenDm(ctx, key);
  if (existing) return { room: existing, created: false };
  try {
    const room = await ctx.db.transaction().execute(async (trx) => {
      const now = ctx.now();
      const row = await trx
        .insertInto("rooms")
        .values({
          name: null,
          kind: "dm",
          created_by: actor.userId,
          deleted_at: null,
          created_at: now,
          dm_key: key,
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      await trx
        .insertInto("room_members")
        .values([
          { room_id: row.id, user_id: actor.userId, joined_at: now },
          { room_id: row.id, user_id: userId, joined_at: now },
        ])
        .execute();
      return roomView(trx, row.id);
    });
    return { room, created: true };
  } catch (error) {
    // The other user opened the same DM at the same moment: theirs is the one.
    if (!isUniqueViolation(error)) throw error;
    const raced = await findOpenDm(ctx, key);
    if (!raced) throw error;
    return { room: raced, created: false };
  }
}

/**
 * Turns a direct message into a named room (same id, same members and history); fires
 * ROOM_CREATED with `convertedFromDm: true`. The member who promotes it becomes its creator.
 */
export async function promoteDm(
  ctx: AppContext,
  actor: Principal,
  dmId: number,
  input: { name: string },
): Promise<RoomView> {
  const name = validateRoomName(input.name);
  return inTransaction(ctx, async (tx) => {
    const room = await findLiveRoom(tx.db, dmId);
    if (!(await isMember(tx.db, dmId, actor.userId)))
      throw new AppError("not_a_member", `you are not a member of ${dmId}`);
    if (room.kind !== "dm") throw new AppError("already_promoted", `${dmId} is already a room`);
    const promoted = await tx.db
      .updateTable("rooms")
      .set({ kind: "room", name, dm_key: null, created_by: actor.userId })
      .where("id", "=", dmId)
      .where("kind", "=", "dm")
      .executeTakeFirst();
    // A concurrent promotion of the same DM won.
    if (Number(promoted.numUpdatedRows) !== 1)
      throw new AppError("already_promoted", `${dmId} is already a room`);
    await tx.emit(
      "ROOM_CREATED",
      eventData.roomCreated({ roomId: dmId, createdBy: actor.username, convertedFromDm: true }),
    );
    return roomView(tx.db, dmId);
  });
}
