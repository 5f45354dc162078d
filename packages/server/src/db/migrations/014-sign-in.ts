import type { Kysely, Migration } from "kysely";

/**
 * Sign-in (docs/security.md, "Sign-in and sessions"):
 * - `users.password_hash`: an argon2id PHC string; null for accounts without a password (made by
 *   the admin API for bots, or by single sign-on).
 * - `sessions`: one row per signed-in browser or client, keyed by the SHA-256 of its secret (the
 *   cookie's value; never stored). Every request reads it, so deleting the row (logout, a password
 *   change) ends the session in every process at once. `csrf_token` is what `GET /api/auth/csrf`
 *   hands out for it.
 * - `login_attempts`: the sliding-window log of sign-in attempts per username and per address that
 *   the login rate limit counts; in the database, so every process counts the same attempts.
 * - `invites`: single-use invitations, keyed by the SHA-256 of their token.
 * - `oidc_logins`: a single sign-on attempt between its start and the provider's redirect back
 *   (state, nonce, PKCE verifier), keyed by the SHA-256 of its state, so any process can finish it.
 * Single sign-on links a provider's subject to a user in `user_identities` (migration 005).
 */
export const signIn: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema.alterTable("users").addColumn("password_hash", "varchar(512)").execute();
    await db.schema
      .createTable("sessions")
      .addColumn("id_hash", "varchar(64)", (c) => c.primaryKey())
      .addColumn("user_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("csrf_token", "varchar(64)", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("expires_at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("sessions_user").on("sessions").column("user_id").execute();
    await db.schema
      .createTable("login_attempts")
      .addColumn("attempt_key", "varchar(320)", (c) => c.notNull())
      .addColumn("attempt_id", "varchar(32)", (c) => c.notNull())
      .addColumn("attempted_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("login_attempts_pk", ["attempt_key", "attempted_at", "attempt_id"])
      .execute();
    await db.schema
      .createIndex("login_attempts_time")
      .on("login_attempts")
      .column("attempted_at")
      .execute();
    await db.schema
      .createTable("invites")
      .addColumn("token_hash", "varchar(64)", (c) => c.primaryKey())
      .addColumn("role", "varchar(16)", (c) => c.notNull())
      .addColumn("display_name", "varchar(200)")
      .addColumn("created_by", "bigint", (c) => c.references("users.id").onDelete("set null"))
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("expires_at", "bigint", (c) => c.notNull())
      .addColumn("used_at", "bigint")
      .addColumn("used_by", "bigint", (c) => c.references("users.id").onDelete("set null"))
      .execute();
    await db.schema
      .createTable("oidc_logins")
      .addColumn("state_hash", "varchar(64)", (c) => c.primaryKey())
      .addColumn("nonce", "varchar(128)", (c) => c.notNull())
      .addColumn("code_verifier", "varchar(128)", (c) => c.notNull())
      .addColumn("return_to", "varchar(200)", (c) => c.notNull())
      .addColumn("expires_at", "bigint", (c) => c.notNull())
      .execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    await db.schema.dropTable("oidc_logins").execute();
    await db.schema.dropTable("invites").execute();
    await db.schema.dropTable("login_attempts").execute();
    await db.schema.dropTable("sessions").execute();
    await db.schema.alterTable("users").dropColumn("password_hash").execute();
  },
};
