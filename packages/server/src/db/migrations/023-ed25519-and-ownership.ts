import { sql, type Kysely, type Migration } from "kysely";

/**
 * Asymmetric signatures and the ownership check (docs/webhooks.md, "Ed25519 signatures" and
 * "Ownership check"):
 * - `webhooks.signing_key_ciphertext`: the endpoint's ed25519 private key (PKCS#8 DER, base64),
 *   sealed like the secret; `public_key` its public half as shown (`whpk_<base64>`). Null until
 *   the endpoint first uses the `standard-webhooks-ed25519` scheme.
 * - `previous_signing_key_ciphertext` / `previous_signing_key_expires_at`: during a rotation
 *   overlap, the old private key, which signs too until then.
 * - `webhooks.verification`: "not_required" (every endpoint before this, and every endpoint when
 *   the check is off), "pending" (nothing is claimed for it but its challenges) or "verified";
 *   `verification_challenge` the challenge its receiver must echo.
 * - `webhook_deliveries_verification_due`: the few challenge deliveries, which are claimed while
 *   their endpoint is pending (or disabled), as test deliveries are to a disabled one.
 */
export const ed25519AndOwnership: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    for (const [column, type] of [
      ["signing_key_ciphertext", "text"],
      ["public_key", "text"],
      ["previous_signing_key_ciphertext", "text"],
      ["previous_signing_key_expires_at", "bigint"],
      ["verification_challenge", "text"],
    ] as const) {
      await db.schema.alterTable("webhooks").addColumn(column, type).execute();
    }
    await db.schema
      .alterTable("webhooks")
      .addColumn("verification", "text", (c) => c.notNull().defaultTo("not_required"))
      .execute();
    await db.schema
      .createIndex("webhook_deliveries_verification_due")
      .on("webhook_deliveries")
      .column("next_attempt_at")
      .where(sql.ref("event"), "=", "WEBHOOK_VERIFICATION")
      .execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    await db.schema.dropIndex("webhook_deliveries_verification_due").execute();
    for (const column of [
      "verification",
      "verification_challenge",
      "previous_signing_key_expires_at",
      "previous_signing_key_ciphertext",
      "public_key",
      "signing_key_ciphertext",
    ]) {
      await db.schema.alterTable("webhooks").dropColumn(column).execute();
    }
  },
};
