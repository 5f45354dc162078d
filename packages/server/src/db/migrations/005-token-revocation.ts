import type { Kysely, Migration } from "kysely";

/**
 * Token revocation and identity-provider links.
 * - `revoked_tokens`: one row per revoked token id (`jti`), kept until the token would have
 *   expired anyway.
 * - `users.tokens_revoked_before`: epoch ms; every token of the user issued up to then is revoked.
 * - `user_identities`: which local user an identity provider's subject signs in as. Only an admin
 *   makes the link, so a provider account named "admin" is nobody until linked.
 */
export const tokenRevocation: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("revoked_tokens")
      .addColumn("token_id", "varchar(64)", (c) => c.primaryKey())
      .addColumn("revoked_at", "bigint", (c) => c.notNull())
      .addColumn("expires_at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema.alterTable("users").addColumn("tokens_revoked_before", "bigint").execute();
    await db.schema
      .createTable("user_identities")
      .addColumn("issuer", "varchar(512)", (c) => c.notNull())
      .addColumn("subject", "varchar(255)", (c) => c.notNull())
      .addColumn("user_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("user_identities_pk", ["issuer", "subject"])
      .execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    await db.schema.dropTable("user_identities").execute();
    await db.schema.alterTable("users").dropColumn("tokens_revoked_before").execute();
    await db.schema.dropTable("revoked_tokens").execute();
  },
};
