import type { Kysely } from "kysely";
import type { Database } from "../../../db/schema.js";

/**
 * Ends rotation overlaps: deletes each old secret whose `previous_secret_expires_at` has passed,
 * and each old ed25519 private key whose `previous_signing_key_expires_at` has.
 * The claim already stops signing with an expired one (it compares the time itself), so this
 * only removes it from the database; run on the dispatcher's sweep, by whichever process gets
 * there first. A process down when the window ends changes nothing: the old secret is unused from
 * that instant, and deleted at the next sweep of any process.
 */
export async function expireSecrets(db: Kysely<Database>, now: number): Promise<number> {
  const result = await db
    .updateTable("webhooks")
    .set({ previous_secret_ciphertext: null, previous_secret_expires_at: null })
    .where("previous_secret_expires_at", "<=", now)
    .executeTakeFirst();
  const keys = await db
    .updateTable("webhooks")
    .set({ previous_signing_key_ciphertext: null, previous_signing_key_expires_at: null })
    .where("previous_signing_key_expires_at", "<=", now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) + Number(keys.numUpdatedRows);
}
