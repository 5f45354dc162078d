import { sql, type Kysely } from "kysely";
import type { Database, UserRole } from "../db/schema.js";

/**
 * The list of bearer tokens this server issued (migration 027): a row per token id, never the
 * token. Whether a token still works is read as authentication reads it: not expired, its id not
 * revoked, issued after its user's "revoked before" time, its user active with the same role.
 */
export interface IssuedTokenRow {
  token_id: string;
  user_id: number;
  username: string;
  role: UserRole;
  issued_at: number | string;
  expires_at: number | string;
}

export async function insertIssuedToken(
  db: Kysely<Database>,
  token: { tokenId: string; userId: number; role: UserRole; issuedAt: number; expiresAt: number },
): Promise<void> {
  // Only for a user that exists (a token for any other id authenticates no one, and is not
  // listed): recording a token never makes issuing it fail.
  await db
    .insertInto("issued_tokens")
    .columns(["token_id", "user_id", "role", "issued_at", "expires_at"])
    .expression(
      db
        .selectFrom("users")
        .select([
          sql.val(token.tokenId).as("token_id"),
          "id",
          sql.val(token.role).as("role"),
          sql.val(token.issuedAt).as("issued_at"),
          sql.val(token.expiresAt).as("expires_at"),
        ])
        .where("id", "=", token.userId),
    )
    .execute();
}

/**
 * Drops the rows of tokens that expired: they are never listed, and nothing else reads them.
 * Tokens are issued rarely (an admin, the CLI, a first start), so each issue sweeps.
 */
export async function deleteExpiredIssuedTokens(db: Kysely<Database>, now: number): Promise<void> {
  await db.deleteFrom("issued_tokens").where("expires_at", "<=", now).execute();
}

/**
 * Tokens that still work, ascending token ids after `afterTokenId`, `limit + 1` rows; `prefix`
 * the first characters of the id, `userId` one user's. `issued_at` is the token's `iat` in
 * milliseconds, so "issued after the user's revoked-before time" is the check authentication
 * makes in seconds.
 */
export async function listLiveTokenRows(
  db: Kysely<Database>,
  page: {
    now: number;
    afterTokenId: string | undefined;
    limit: number;
    prefix?: string | undefined;
    userId?: number | undefined;
  },
): Promise<IssuedTokenRow[]> {
  let select = db
    .selectFrom("issued_tokens as t")
    .innerJoin("users as u", "u.id", "t.user_id")
    .select(["t.token_id", "t.user_id", "u.username", "t.role", "t.issued_at", "t.expires_at"])
    .where("t.expires_at", ">", page.now)
    .where("u.status", "=", "active")
    .whereRef("u.role", "=", "t.role")
    .where((eb) =>
      eb.or([
        eb("u.tokens_revoked_before", "is", null),
        eb("t.issued_at", ">", eb.ref("u.tokens_revoked_before")),
      ]),
    )
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom("revoked_tokens as r")
            .select("r.token_id")
            .whereRef("r.token_id", "=", "t.token_id"),
        ),
      ),
    )
    .orderBy("t.token_id", "asc")
    .limit(page.limit + 1);
  if (page.afterTokenId !== undefined) select = select.where("t.token_id", ">", page.afterTokenId);
  if (page.prefix !== undefined) {
    // substr, not LIKE: ids are case-sensitive (SQLite's LIKE is not) and hold "_".
    select = select.where(
      sql<string>`substr(${sql.ref("t.token_id")}, 1, ${page.prefix.length})`,
      "=",
      page.prefix,
    );
  }
  if (page.userId !== undefined) select = select.where("t.user_id", "=", page.userId);
  return select.execute();
}
