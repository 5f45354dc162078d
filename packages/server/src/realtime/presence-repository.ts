import { sql, type ExpressionBuilder, type Kysely, type Transaction } from "kysely";
import type { Database } from "../db/schema.js";

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The presence rows (migration 006) and the statements over them. A user is present in a room while
 * a LIVE connection row exists for them: one whose process has heartbeated within `expiryMs`. So a
 * process that dies (SIGKILL, power loss) stops counting once its heartbeat is stale, without
 * anyone having to clean up after it.
 */
export interface PresenceTiming {
  now: number;
  /** A process silent this long is dead (three heartbeats). */
  expiryMs: number;
  graceMs: number;
}

/** `exists (a live connection of this presence row's user in its room)`. */
function liveConnection(eb: ExpressionBuilder<Database, "realtime_presence">, cutoff: number) {
  return eb.exists(
    eb
      .selectFrom("realtime_connections as c")
      .innerJoin("realtime_instances as i", "i.instance_id", "c.instance_id")
      .select(sql.lit(1).as("one"))
      .whereRef("c.room_id", "=", "realtime_presence.room_id")
      .whereRef("c.user_id", "=", "realtime_presence.user_id")
      .where("i.heartbeat_at", ">=", cutoff),
  );
}

/** Registers (or renews) this process and its heartbeat. */
export async function heartbeat(db: Db, instanceId: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable("realtime_instances")
    .set({ heartbeat_at: now })
    .where("instance_id", "=", instanceId)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 1) return true;
  await db
    .insertInto("realtime_instances")
    .values({ instance_id: instanceId, heartbeat_at: now })
    .onConflict((oc) => oc.column("instance_id").doUpdateSet({ heartbeat_at: now }))
    .execute();
  return false;
}

/**
 * This process has a connection of the user subscribed to the room. Answers true when the user
 * BECAME present (the caller emits USER_JOINED_ROOM in the same transaction): an existing presence
 * row, leaving or not, only has its leave cancelled.
 *
 * The update-then-insert shape is the same on both databases: on PostgreSQL a concurrent
 * endPresence() holding the row makes the update wait, then find nothing, and the insert makes the
 * user present again (LEFT, then JOINED, in commit order); two processes inserting at once are
 * told apart by the primary key, so exactly one of them fires the event.
 */
export async function addConnection(
  trx: Transaction<Database>,
  instanceId: string,
  room: { roomId: number; userId: number; username: string },
  now: number,
): Promise<boolean> {
  await trx
    .insertInto("realtime_connections")
    .values({ instance_id: instanceId, room_id: room.roomId, user_id: room.userId })
    .onConflict((oc) => oc.doNothing())
    .execute();
  const kept = await trx
    .updateTable("realtime_presence")
    .set({ leave_after: null })
    .where("room_id", "=", room.roomId)
    .where("user_id", "=", room.userId)
    .executeTakeFirst();
  if (Number(kept.numUpdatedRows) > 0) return false;
  const inserted = await trx
    .insertInto("realtime_presence")
    .values({
      room_id: room.roomId,
      user_id: room.userId,
      username: room.username,
      since: now,
      leave_after: null,
    })
    .onConflict((oc) => oc.doNothing())
    .returning("room_id")
    .execute();
  return inserted.length === 1;
}

/**
 * This process no longer has a connection of the user in the room: when no live connection is
 * left anywhere, the user's presence ends `graceMs` from now (endDuePresence() fires the event).
 */
export async function removeConnection(
  db: Db,
  instanceId: string,
  room: { roomId: number; userId: number },
  timing: PresenceTiming,
): Promise<void> {
  await db
    .deleteFrom("realtime_connections")
    .where("instance_id", "=", instanceId)
    .where("room_id", "=", room.roomId)
    .where("user_id", "=", room.userId)
    .execute();
  await db
    .updateTable("realtime_presence")
    .set({ leave_after: timing.now + timing.graceMs })
    .where("room_id", "=", room.roomId)
    .where("user_id", "=", room.userId)
    .where((eb) => eb.not(liveConnection(eb, timing.now - timing.expiryMs)))
    .execute();
}

/**
 * Brings `leave_after` in line with the live connections: set (now + grace) where the last live
 * connection vanished without removeConnection() (its process died: heartbeat expiry), cleared
 * where a live connection exists again (a race with a concurrent join). Run by every process's
 * sweep; both statements are idempotent.
 */
export async function reconcilePresence(db: Db, timing: PresenceTiming): Promise<void> {
  const cutoff = timing.now - timing.expiryMs;
  await db
    .updateTable("realtime_presence")
    .set({ leave_after: timing.now + timing.graceMs })
    .where("leave_after", "is", null)
    .where((eb) => eb.not(liveConnection(eb, cutoff)))
    .execute();
  await db
    .updateTable("realtime_presence")
    .set({ leave_after: null })
    .where("leave_after", "is not", null)
    .where((eb) => liveConnection(eb, cutoff))
    .execute();
}

/**
 * Ends the presences whose grace ran out and that still have no live connection; answers them so
 * the caller fires USER_LEFT_ROOM in the same transaction. One DELETE ... RETURNING: when several
 * processes sweep at once, each row is returned to exactly one of them.
 */
export async function endDuePresence(
  trx: Transaction<Database>,
  timing: PresenceTiming,
): Promise<Array<{ room_id: number; user_id: number; username: string }>> {
  return trx
    .deleteFrom("realtime_presence")
    .where("leave_after", "is not", null)
    .where("leave_after", "<=", timing.now)
    .where((eb) => eb.not(liveConnection(eb, timing.now - timing.expiryMs)))
    .returning(["room_id", "user_id", "username"])
    .execute();
}

/** The earliest pending leave, so the sweep can wake exactly then. */
export async function nextLeaveAt(db: Db): Promise<number | undefined> {
  const row = await db
    .selectFrom("realtime_presence")
    .select((eb) => eb.fn.min("leave_after").as("next"))
    .executeTakeFirst();
  return row?.next == null ? undefined : Number(row.next);
}

/** The usernames present in a room, sorted. */
export async function presentIn(db: Db, roomId: number): Promise<string[]> {
  const rows = await db
    .selectFrom("realtime_presence")
    .select("username")
    .where("room_id", "=", roomId)
    .orderBy("username")
    .execute();
  return rows.map((row) => row.username);
}

/**
 * Forgets this process (graceful shutdown): its connection rows and its instance row. The
 * presences they held start their grace at the next sweep of any process (reconcilePresence).
 */
export async function removeInstance(db: Db, instanceId: string): Promise<void> {
  await db.deleteFrom("realtime_connections").where("instance_id", "=", instanceId).execute();
  await db.deleteFrom("realtime_instances").where("instance_id", "=", instanceId).execute();
}

/** Deletes processes dead for long (and their rows): housekeeping, the rows no longer count. */
export async function forgetDeadInstances(db: Db, before: number): Promise<void> {
  const dead = db
    .selectFrom("realtime_instances")
    .select("instance_id")
    .where("heartbeat_at", "<", before);
  await db.deleteFrom("realtime_connections").where("instance_id", "in", dead).execute();
  await db.deleteFrom("realtime_instances").where("heartbeat_at", "<", before).execute();
}
