import { sql, type Kysely, type Selectable } from "kysely";
import type { Database, UsersTable } from "../db/schema.js";

/**
 * The one query authentication runs: the token's user, read on every authenticated request (so a
 * disabled or deleted account stops at once), with what revokes the token: the user's "revoked
 * before" time and whether the token's own id was revoked. Only the columns the checks need.
 */
export type PrincipalRow = Pick<
  Selectable<UsersTable>,
  "id" | "username" | "role" | "status" | "tokens_revoked_before"
> & { token_revoked: number | string | bigint | boolean };

/**
 * By id for the tokens this server issues; by the (issuer, subject) link an admin made for an
 * identity provider's, never by a username the provider chose.
 */
export async function findPrincipalRow(
  db: Kysely<Database>,
  subject: { id: number } | { issuer: string; subject: string },
  tokenId: string | undefined,
): Promise<PrincipalRow | undefined> {
  let query = db
    .selectFrom("users")
    .select([
      "users.id",
      "users.username",
      "users.role",
      "users.status",
      "users.tokens_revoked_before",
    ])
    .select(
      tokenId === undefined
        ? sql<number>`0`.as("token_revoked")
        : (eb) =>
            eb
              .exists(
                eb.selectFrom("revoked_tokens").select("token_id").where("token_id", "=", tokenId),
              )
              .as("token_revoked"),
    );
  if ("id" in subject) return query.where("users.id", "=", subject.id).executeTakeFirst();
  query = query
    .innerJoin("user_identities", "user_identities.user_id", "users.id")
    .where("user_identities.issuer", "=", subject.issuer)
    .where("user_identities.subject", "=", subject.subject);
  return query.executeTakeFirst();
}

/** Revokes one token by its id; revoking it again changes nothing. */
export async function insertRevokedToken(
  db: Kysely<Database>,
  tokenId: string,
  now: number,
  expiresAt: number,
): Promise<void> {
  await db
    .insertInto("revoked_tokens")
    .values({ token_id: tokenId, revoked_at: now, expires_at: expiresAt })
    .onConflict((oc) => oc.column("token_id").doNothing())
    .execute();
}

/** Revokes every token of the user issued up to `now`; false when there is no such user. */
export async function revokeUserTokensBefore(
  db: Kysely<Database>,
  userId: number,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable("users")
    .set({ tokens_revoked_before: now })
    .where("id", "=", userId)
    .where("status", "!=", "deleted")
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Links an identity provider's subject to a local user (replacing an earlier link of it). */
export async function upsertUserIdentity(
  db: Kysely<Database>,
  identity: { issuer: string; subject: string; userId: number; now: number },
): Promise<void> {
  await db
    .insertInto("user_identities")
    .values({
      issuer: identity.issuer,
      subject: identity.subject,
      user_id: identity.userId,
      created_at: identity.now,
    })
    .onConflict((oc) => oc.columns(["issuer", "subject"]).doUpdateSet({ user_id: identity.userId }))
    .execute();
}
