import { type Kysely, type Migration } from "kysely";
import { dialectOf, idColumnType } from "../dialect.js";

// One migration set for both dialects: times are BIGINT epoch milliseconds, flags 0/1 integers.
export const initial: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    const id = idColumnType(dialectOf(db));

    await db.schema
      .createTable("users")
      .addColumn("id", id, (c) => c.primaryKey())
      .addColumn("username", "varchar(64)", (c) => c.notNull().unique())
      .addColumn("display_name", "varchar(200)", (c) => c.notNull())
      .addColumn("role", "varchar(16)", (c) => c.notNull())
      .addColumn("status", "varchar(16)", (c) => c.notNull().defaultTo("active"))
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("rooms")
      .addColumn("id", id, (c) => c.primaryKey())
      .addColumn("name", "varchar(200)")
      .addColumn("kind", "varchar(8)", (c) => c.notNull())
      .addColumn("created_by", "bigint", (c) => c.notNull().references("users.id"))
      .addColumn("deleted_at", "bigint")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("room_members")
      .addColumn("room_id", "bigint", (c) => c.notNull().references("rooms.id").onDelete("cascade"))
      .addColumn("user_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("joined_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("room_members_pk", ["room_id", "user_id"])
      .execute();
    await db.schema.createIndex("room_members_user").on("room_members").column("user_id").execute();

    await db.schema
      .createTable("inbound_webhooks")
      .addColumn("id", id, (c) => c.primaryKey())
      .addColumn("room_id", "bigint", (c) => c.notNull().references("rooms.id").onDelete("cascade"))
      .addColumn("display_name", "varchar(200)", (c) => c.notNull())
      .addColumn("avatar_url", "text")
      .addColumn("enabled", "integer", (c) => c.notNull().defaultTo(1))
      .addColumn("token_hash", "varchar(64)", (c) => c.notNull().unique())
      .addColumn("token_last8", "varchar(8)", (c) => c.notNull())
      .addColumn("created_by", "bigint")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("messages")
      .addColumn("id", id, (c) => c.primaryKey())
      .addColumn("room_id", "bigint", (c) => c.notNull().references("rooms.id").onDelete("cascade"))
      .addColumn("sender_user_id", "bigint", (c) => c.references("users.id"))
      .addColumn("inbound_webhook_id", "bigint")
      .addColumn("sender_display_name", "varchar(200)", (c) => c.notNull())
      .addColumn("sender_avatar_url", "text")
      .addColumn("content", "text", (c) => c.notNull())
      .addColumn("content_format", "varchar(16)", (c) => c.notNull())
      .addColumn("moderation_status", "varchar(16)", (c) => c.notNull().defaultTo("none"))
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("messages_room_id")
      .on("messages")
      .columns(["room_id", "id"])
      .execute();

    await db.schema
      .createTable("files")
      .addColumn("id", id, (c) => c.primaryKey())
      .addColumn("room_id", "bigint", (c) => c.notNull().references("rooms.id").onDelete("cascade"))
      .addColumn("uploaded_by", "bigint", (c) => c.notNull().references("users.id"))
      .addColumn("file_name", "varchar(255)", (c) => c.notNull())
      .addColumn("file_size", "bigint", (c) => c.notNull())
      .addColumn("file_type", "varchar(255)", (c) => c.notNull())
      .addColumn("sha256", "varchar(64)", (c) => c.notNull())
      .addColumn("storage_key", "varchar(255)", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("moderation_flags")
      .addColumn("id", id, (c) => c.primaryKey())
      .addColumn("message_id", "bigint", (c) =>
        c.notNull().references("messages.id").onDelete("cascade"),
      )
      .addColumn("room_id", "bigint", (c) => c.notNull())
      .addColumn("category", "varchar(64)", (c) => c.notNull())
      .addColumn("score", "double precision", (c) => c.notNull())
      .addColumn("band", "varchar(8)", (c) => c.notNull())
      .addColumn("status", "varchar(16)", (c) => c.notNull())
      .addColumn("review_status", "varchar(16)", (c) => c.notNull().defaultTo("pending"))
      .addColumn("reviewed_by", "bigint")
      .addColumn("reviewed_at", "bigint")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("moderation_flags_review")
      .on("moderation_flags")
      .columns(["review_status", "id"])
      .execute();

    await db.schema
      .createTable("webhooks")
      .addColumn("id", id, (c) => c.primaryKey())
      .addColumn("name", "varchar(200)", (c) => c.notNull())
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("secret_ciphertext", "text", (c) => c.notNull())
      .addColumn("events", "text", (c) => c.notNull())
      .addColumn("enabled", "integer", (c) => c.notNull().defaultTo(1))
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("webhook_deliveries")
      .addColumn("id", id, (c) => c.primaryKey())
      .addColumn("webhook_id", "bigint", (c) =>
        c.notNull().references("webhooks.id").onDelete("cascade"),
      )
      .addColumn("event", "varchar(64)", (c) => c.notNull())
      .addColumn("body", "text", (c) => c.notNull())
      .addColumn("status", "varchar(16)", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("next_attempt_at", "bigint")
      .addColumn("locked_until", "bigint")
      .addColumn("locked_by", "varchar(100)")
      .addColumn("last_response_status", "integer")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .execute();
    // The claim scans due rows by time; finished rows have next_attempt_at null and drop out.
    await db.schema
      .createIndex("webhook_deliveries_due")
      .on("webhook_deliveries")
      .columns(["next_attempt_at"])
      .execute();
    await db.schema
      .createIndex("webhook_deliveries_webhook")
      .on("webhook_deliveries")
      .columns(["webhook_id", "id"])
      .execute();
    await db.schema
      .createIndex("webhook_deliveries_created")
      .on("webhook_deliveries")
      .columns(["created_at"])
      .execute();

    await db.schema
      .createTable("webhook_attempts")
      .addColumn("id", id, (c) => c.primaryKey())
      .addColumn("delivery_id", "bigint", (c) =>
        c.notNull().references("webhook_deliveries.id").onDelete("cascade"),
      )
      .addColumn("attempt", "integer", (c) => c.notNull())
      .addColumn("started_at", "bigint", (c) => c.notNull())
      .addColumn("duration_ms", "integer", (c) => c.notNull())
      .addColumn("response_status", "integer")
      .addColumn("response_body", "text")
      .addColumn("error", "text")
      .execute();
    await db.schema
      .createIndex("webhook_attempts_delivery")
      .on("webhook_attempts")
      .columns(["delivery_id", "attempt"])
      .execute();

    await db.schema
      .createTable("server_keys")
      .addColumn("name", "varchar(64)", (c) => c.primaryKey())
      .addColumn("value", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("job_locks")
      .addColumn("name", "varchar(64)", (c) => c.primaryKey())
      .addColumn("locked_until", "bigint", (c) => c.notNull())
      .addColumn("last_run_at", "bigint", (c) => c.notNull())
      .execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    for (const table of [
      "job_locks",
      "server_keys",
      "webhook_attempts",
      "webhook_deliveries",
      "webhooks",
      "moderation_flags",
      "files",
      "messages",
      "inbound_webhooks",
      "room_members",
      "rooms",
      "users",
    ]) {
      await db.schema.dropTable(table).ifExists().execute();
    }
  },
};
