import type { Kysely, Migration } from "kysely";

/**
 * Files in the conversation (docs/chat-api.md, "Files"): a post carries the files its author
 * uploaded to the room, each at most once, so a file belongs to one message (`message_id`, null
 * until a post attaches it). A message's files are read along `files_message`; deleting the
 * message deletes them, rows and bytes.
 */
export const messageFiles: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable("files")
      .addColumn("message_id", "bigint", (c) => c.references("messages.id"))
      .execute();
    await db.schema.createIndex("files_message").on("files").column("message_id").execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    await db.schema.dropIndex("files_message").execute();
    await db.schema.alterTable("files").dropColumn("message_id").execute();
  },
};
