import { sql, type Kysely, type Migration } from "kysely";

/**
 * Messages that live (docs/chat-api.md, "Edit, delete, threads"):
 * - `thread_id`: the top-level message a reply answers (null at top level); a thread's replies are
 *   read by `messages_thread` (partial: top-level posts, the common case, do not write it).
 * - `reply_count`, `last_reply_at`: kept on the thread's top-level message by each reply.
 * - `revision` (the original is 1), `edited_at`: what the last edit made; earlier versions are in
 *   `message_revisions`, one row per replaced version, so a post writes no revision row.
 * - `updated_at`: the creation time, then the time of any change (edit, delete, a reply in its
 *   thread); `messages_room_updated` answers `?updatedSince=` without a scan.
 * - `deleted_at`: a deleted message keeps its row as a tombstone (its id is never reused, threads
 *   keep their shape) with its content emptied and its revisions deleted.
 * - `moderation_flags.revision`: the revision of the message moderation judged (1: the post, more:
 *   an edit), so approving a quarantined edit announces an edit, not a new message.
 */
export const messagesThatLive: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema.alterTable("messages").addColumn("thread_id", "bigint").execute();
    await db.schema
      .alterTable("messages")
      .addColumn("reply_count", "integer", (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable("messages").addColumn("last_reply_at", "bigint").execute();
    await db.schema
      .alterTable("messages")
      .addColumn("revision", "integer", (c) => c.notNull().defaultTo(1))
      .execute();
    await db.schema.alterTable("messages").addColumn("edited_at", "bigint").execute();
    // NOT NULL needs a default to be added to existing rows; every insert sets it.
    await db.schema
      .alterTable("messages")
      .addColumn("updated_at", "bigint", (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable("messages").addColumn("deleted_at", "bigint").execute();
    await sql`UPDATE messages SET updated_at = created_at`.execute(db);
    await db.schema
      .createIndex("messages_thread")
      .on("messages")
      .columns(["thread_id", "id"])
      .where(sql.ref("thread_id"), "is not", null)
      .execute();
    await db.schema
      .createIndex("messages_room_updated")
      .on("messages")
      .columns(["room_id", "updated_at", "id"])
      .execute();
    await db.schema
      .createTable("message_revisions")
      .addColumn("message_id", "bigint", (c) =>
        c.notNull().references("messages.id").onDelete("cascade"),
      )
      .addColumn("revision", "integer", (c) => c.notNull())
      .addColumn("content", "text", (c) => c.notNull())
      .addColumn("content_format", "varchar(16)", (c) => c.notNull())
      .addColumn("edited_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("message_revisions_pk", ["message_id", "revision"])
      .execute();
    await db.schema
      .alterTable("moderation_flags")
      .addColumn("revision", "integer", (c) => c.notNull().defaultTo(1))
      .execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    await db.schema.alterTable("moderation_flags").dropColumn("revision").execute();
    await db.schema.dropTable("message_revisions").execute();
    await db.schema.dropIndex("messages_room_updated").execute();
    await db.schema.dropIndex("messages_thread").execute();
    for (const column of [
      "deleted_at",
      "updated_at",
      "edited_at",
      "revision",
      "last_reply_at",
      "reply_count",
      "thread_id",
    ])
      await db.schema.alterTable("messages").dropColumn(column).execute();
  },
};
