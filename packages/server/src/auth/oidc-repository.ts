import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";

export async function insertOidcLogin(
  db: Kysely<Database>,
  login: {
    stateHash: string;
    nonce: string;
    codeVerifier: string;
    returnTo: string;
    expiresAt: number;
  },
): Promise<void> {
  await db
    .insertInto("oidc_logins")
    .values({
      state_hash: login.stateHash,
      nonce: login.nonce,
      code_verifier: login.codeVerifier,
      return_to: login.returnTo,
      expires_at: login.expiresAt,
    })
    .execute();
}

/** Takes the sign-on attempt out (single use) and answers it, or undefined when there is none. */
export async function takeOidcLogin(
  db: Kysely<Database>,
  stateHash: string,
): Promise<
  { nonce: string; code_verifier: string; return_to: string; expires_at: number } | undefined
> {
  return db
    .deleteFrom("oidc_logins")
    .where("state_hash", "=", stateHash)
    .returning(["nonce", "code_verifier", "return_to", "expires_at"])
    .executeTakeFirst();
}

export async function deleteExpiredOidcLogins(db: Kysely<Database>, now: number): Promise<void> {
  await db.deleteFrom("oidc_logins").where("expires_at", "<=", now).execute();
}

/** The user linked to a provider's subject. */
export async function findLinkedUser(
  db: Kysely<Database>,
  issuer: string,
  subject: string,
): Promise<{ id: number; status: string } | undefined> {
  return db
    .selectFrom("user_identities")
    .innerJoin("users", "users.id", "user_identities.user_id")
    .select(["users.id", "users.status"])
    .where("user_identities.issuer", "=", issuer)
    .where("user_identities.subject", "=", subject)
    .executeTakeFirst();
}
