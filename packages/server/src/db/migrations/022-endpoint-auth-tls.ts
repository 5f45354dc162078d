import type { Kysely, Migration } from "kysely";

/**
 * Outbound for enterprise receivers (docs/webhooks.md, "Receiver authentication" and "Mutual
 * TLS"):
 * - `webhooks.auth_ciphertext`: the endpoint's `auth` object (basic, bearer or OAuth 2.0 client
 *   credentials), sealed whole like the custom headers; null without one.
 * - `webhooks.tls_ciphertext`: the client certificate, its key, the key's passphrase and the extra
 *   CA, sealed whole; null without mutual TLS.
 * - `webhooks.tls_subject` / `tls_expires_at`: the certificate's subject and end of validity,
 *   kept in the clear for reads (a certificate is public; its key is not).
 */
export const endpointAuthTls: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema.alterTable("webhooks").addColumn("auth_ciphertext", "text").execute();
    await db.schema.alterTable("webhooks").addColumn("tls_ciphertext", "text").execute();
    await db.schema.alterTable("webhooks").addColumn("tls_subject", "text").execute();
    await db.schema.alterTable("webhooks").addColumn("tls_expires_at", "bigint").execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    await db.schema.alterTable("webhooks").dropColumn("tls_expires_at").execute();
    await db.schema.alterTable("webhooks").dropColumn("tls_subject").execute();
    await db.schema.alterTable("webhooks").dropColumn("tls_ciphertext").execute();
    await db.schema.alterTable("webhooks").dropColumn("auth_ciphertext").execute();
  },
};
