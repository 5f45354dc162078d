import { type Kysely, type Migration } from "kysely";

/**
 * Shared state of the live stream (docs/realtime.md), so that every process sharing the database
 * agrees on who is present and who is in a call:
 * - realtime_instances: one row per running process, its heartbeat renewed every
 *   PARLEY_PRESENCE_HEARTBEAT_MS; a row silent for three heartbeats belongs to a dead process.
 * - realtime_connections: (process, room, user) while that process has at least one connection of
 *   the user subscribed to the room.
 * - realtime_presence: (room, user) from the USER_JOINED_ROOM via presence to the matching
 *   USER_LEFT_ROOM; `leave_after` is set when the last live connection went away (the grace).
 * - realtime_calls / realtime_call_participants: the room's current call and who is in it.
 * No foreign keys: the rows are short-lived and a room's or user's deletion clears them itself.
 */
export const realtime: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("realtime_instances")
      .addColumn("instance_id", "varchar(64)", (c) => c.primaryKey())
      .addColumn("heartbeat_at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("realtime_connections")
      .addColumn("instance_id", "varchar(64)", (c) => c.notNull())
      .addColumn("room_id", "bigint", (c) => c.notNull())
      .addColumn("user_id", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("realtime_connections_pk", ["room_id", "user_id", "instance_id"])
      .execute();
    await db.schema
      .createIndex("realtime_connections_instance")
      .on("realtime_connections")
      .column("instance_id")
      .execute();
    await db.schema
      .createTable("realtime_presence")
      .addColumn("room_id", "bigint", (c) => c.notNull())
      .addColumn("user_id", "bigint", (c) => c.notNull())
      .addColumn("username", "varchar(64)", (c) => c.notNull())
      .addColumn("since", "bigint", (c) => c.notNull())
      .addColumn("leave_after", "bigint")
      .addPrimaryKeyConstraint("realtime_presence_pk", ["room_id", "user_id"])
      .execute();
    await db.schema
      .createIndex("realtime_presence_leaving")
      .on("realtime_presence")
      .column("leave_after")
      .execute();
    await db.schema
      .createTable("realtime_calls")
      .addColumn("room_id", "bigint", (c) => c.primaryKey())
      .addColumn("call_id", "varchar(64)", (c) => c.notNull())
      .addColumn("started_at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("realtime_call_participants")
      .addColumn("room_id", "bigint", (c) => c.notNull())
      .addColumn("user_id", "bigint", (c) => c.notNull())
      .addColumn("username", "varchar(64)", (c) => c.notNull())
      .addColumn("joined_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("realtime_call_participants_pk", ["room_id", "user_id"])
      .execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    for (const table of [
      "realtime_call_participants",
      "realtime_calls",
      "realtime_presence",
      "realtime_connections",
      "realtime_instances",
    ])
      await db.schema.dropTable(table).execute();
  },
};
