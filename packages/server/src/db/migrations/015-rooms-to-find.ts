import { sql, type Kysely, type Migration } from "kysely";

/**
 * Rooms to find, unread and mention counts (docs/chat-api.md, "Rooms to find" and "Unread"):
 * - `rooms.visibility`: "public" (listed, anyone may join) or "private" (members add members);
 *   direct messages are "private". `rooms.topic`: a line under the name, or null.
 *   `rooms_public` lists the public rooms by id without reading the private ones.
 * - `room_members.last_read_message_id`: the member's read marker (0: nothing read). Existing
 *   members start with everything read: their marker is set to the room's latest message.
 * - `message_mentions`: who a message mentions (members of its room, never its sender), so a
 *   mention count is a range of the primary key `(user_id, room_id, message_id)` after the marker.
 *   Messages before this migration have no rows: every marker is past them anyway.
 * - `messages_room_unread`: top-level, not deleted messages of a room by id, with every column
 *   the unread count names, so counting after a marker reads only the index (no table rows), and
 *   only the part after the marker.
 */
export const roomsToFind: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable("rooms")
      .addColumn("visibility", "varchar(8)", (c) => c.notNull().defaultTo("public"))
      .execute();
    await db.schema.alterTable("rooms").addColumn("topic", "varchar(1000)").execute();
    await sql`UPDATE rooms SET visibility = 'private' WHERE kind = 'dm'`.execute(db);
    await db.schema
      .createIndex("rooms_public")
      .on("rooms")
      .column("id")
      .where(sql.raw<boolean>(`visibility = 'public' AND kind = 'room' AND deleted_at IS NULL`))
      .execute();

    await db.schema
      .alterTable("room_members")
      .addColumn("last_read_message_id", "bigint", (c) => c.notNull().defaultTo(0))
      .execute();
    await sql`UPDATE room_members SET last_read_message_id = COALESCE(
      (SELECT MAX(id) FROM messages WHERE messages.room_id = room_members.room_id), 0)`.execute(db);

    await db.schema
      .createTable("message_mentions")
      .addColumn("user_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("room_id", "bigint", (c) => c.notNull().references("rooms.id").onDelete("cascade"))
      .addColumn("message_id", "bigint", (c) =>
        c.notNull().references("messages.id").onDelete("cascade"),
      )
      .addPrimaryKeyConstraint("message_mentions_pk", ["user_id", "room_id", "message_id"])
      .execute();
    await db.schema
      .createIndex("message_mentions_message")
      .on("message_mentions")
      .column("message_id")
      .execute();

    await db.schema
      .createIndex("messages_room_unread")
      .on("messages")
      // thread_id and deleted_at, NULL in every entry, are keys too: SQLite counts an index as
      // covering only when it holds every column the query names, predicate columns included
      // (without them it read messages_room_id and every row instead: 6x slower, measured).
      .columns(["room_id", "id", "sender_user_id", "moderation_status", "thread_id", "deleted_at"])
      .where(sql.raw<boolean>(`thread_id IS NULL AND deleted_at IS NULL`))
      .execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    await db.schema.dropIndex("messages_room_unread").execute();
    await db.schema.dropTable("message_mentions").execute();
    await db.schema.alterTable("room_members").dropColumn("last_read_message_id").execute();
    await db.schema.dropIndex("rooms_public").execute();
    await db.schema.alterTable("rooms").dropColumn("topic").execute();
    await db.schema.alterTable("rooms").dropColumn("visibility").execute();
  },
};
