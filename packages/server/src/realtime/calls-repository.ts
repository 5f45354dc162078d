import type { Kysely, Transaction } from "kysely";
import { withRowLock } from "../db/dialect.js";
import type { Database } from "../db/schema.js";

/**
 * Queries on `realtime_calls` (a room's current call) and `realtime_call_participants`. Every
 * function takes the database or a transaction.
 */
type Db = Kysely<Database> | Transaction<Database>;

/** Usernames in the room's call, in the order they joined. */
export async function listCallParticipants(db: Db, roomId: number): Promise<string[]> {
  const rows = await db
    .selectFrom("realtime_call_participants")
    .select("username")
    .where("room_id", "=", roomId)
    .orderBy("joined_at")
    .orderBy("username")
    .execute();
  return rows.map((row) => row.username);
}

/** The room's current call id, if there is a call. */
export async function findCallId(db: Db, roomId: number): Promise<string | undefined> {
  const row = await db
    .selectFrom("realtime_calls")
    .select("call_id")
    .where("room_id", "=", roomId)
    .executeTakeFirst();
  return row?.call_id;
}

/**
 * The room's call id, the row locked (`withRowLock`) so that a join and the last participant's
 * leave serialize (otherwise the leave could delete the call the join just entered).
 */
export async function lockCallId(
  trx: Transaction<Database>,
  roomId: number,
): Promise<string | undefined> {
  const select = trx.selectFrom("realtime_calls").select("call_id").where("room_id", "=", roomId);
  const row = await withRowLock(trx, select).executeTakeFirst();
  return row?.call_id;
}

/** Starts a call in the room unless one is going on. */
export async function insertCallIfNone(
  db: Db,
  call: { roomId: number; callId: string; startedAt: number },
): Promise<void> {
  await db
    .insertInto("realtime_calls")
    .values({ room_id: call.roomId, call_id: call.callId, started_at: call.startedAt })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export async function deleteCall(db: Db, roomId: number): Promise<void> {
  await db.deleteFrom("realtime_calls").where("room_id", "=", roomId).execute();
}

/** Adds the user to the room's call; false when they were in it already. */
export async function insertCallParticipant(
  db: Db,
  participant: { roomId: number; userId: number; username: string; joinedAt: number },
): Promise<boolean> {
  const joined = await db
    .insertInto("realtime_call_participants")
    .values({
      room_id: participant.roomId,
      user_id: participant.userId,
      username: participant.username,
      joined_at: participant.joinedAt,
    })
    .onConflict((oc) => oc.doNothing())
    .returning("user_id")
    .execute();
  return joined.length === 1;
}

/** Takes the user out of the room's call; false when they were not in it. */
export async function deleteCallParticipant(
  db: Db,
  roomId: number,
  userId: number,
): Promise<boolean> {
  const left = await db
    .deleteFrom("realtime_call_participants")
    .where("room_id", "=", roomId)
    .where("user_id", "=", userId)
    .returning("user_id")
    .execute();
  return left.length === 1;
}

/** How many of `usernames` are in the room's call. */
export async function countCallParticipantsAmong(
  db: Db,
  roomId: number,
  usernames: readonly string[],
): Promise<number> {
  const rows = await db
    .selectFrom("realtime_call_participants")
    .select("username")
    .where("room_id", "=", roomId)
    .where("username", "in", usernames)
    .execute();
  return rows.length;
}
