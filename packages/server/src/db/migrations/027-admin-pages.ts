import type { Kysely, Migration } from "kysely";

/**
 * What the admin pages for people and tokens need (docs/admin-ui.md, "People, tokens and rooms"):
 * - `issued_tokens`: one row per bearer token this server issues (its `jti`, whose user, with
 *   which role, when it was issued and when it expires), so that an admin can list the tokens
 *   that are out there and revoke one. Never the token itself. Tokens issued before this
 *   migration are not listed (they still work, and still revoke by id or by user).
 * - `invites.user_id`: an invitation bound to an existing user is a sign-in reset: its link sets
 *   that user's new password (null: an invitation for a new user, as before).
 */
export const adminPages: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("issued_tokens")
      .addColumn("token_id", "varchar(64)", (c) => c.primaryKey())
      .addColumn("user_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("role", "varchar(16)", (c) => c.notNull())
      .addColumn("issued_at", "bigint", (c) => c.notNull())
      .addColumn("expires_at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("issued_tokens_user")
      .on("issued_tokens")
      .columns(["user_id", "issued_at"])
      .execute();
    await db.schema
      .alterTable("invites")
      .addColumn("user_id", "bigint", (c) => c.references("users.id").onDelete("cascade"))
      .execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    await db.schema.alterTable("invites").dropColumn("user_id").execute();
    await db.schema.dropTable("issued_tokens").execute();
  },
};
