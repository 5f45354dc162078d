import type { Kysely, Migration } from "kysely";

/**
 * Reactions (docs/chat-api.md, "Reactions"): one row per message, emoji and member. The primary
 * key makes adding one an INSERT ... ON CONFLICT DO NOTHING and taking it back a DELETE, whose row
 * counts say whether the state changed, so concurrent reactions are neither lost nor doubled. A
 * message's reactions are read along the key; a deleted message's are deleted with its content.
 */
export const messageReactions: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("message_reactions")
      .addColumn("message_id", "bigint", (c) =>
        c.notNull().references("messages.id").onDelete("cascade"),
      )
      .addColumn("emoji", "varchar(64)", (c) => c.notNull())
      .addColumn("user_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("message_reactions_pk", ["message_id", "emoji", "user_id"])
      .execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    await db.schema.dropTable("message_reactions").execute();
  },
};
