import type { Kysely } from "kysely";
import type { Database, InvitesTable, UserRole } from "../db/schema.js";
import type { Insertable, Selectable } from "kysely";

export type InviteRow = Selectable<InvitesTable>;

export async function insertInvite(
  db: Kysely<Database>,
  values: Insertable<InvitesTable>,
): Promise<void> {
  await db.insertInto("invites").values(values).execute();
}

/**
 * Marks the invitation used, if it is still open (unused, not expired), and answers it: one
 * statement, so of two acceptances of one link only one gets a row back.
 */
export async function claimInvite(
  db: Kysely<Database>,
  tokenHash: string,
  now: number,
): Promise<{ role: UserRole; display_name: string | null } | undefined> {
  return db
    .updateTable("invites")
    .set({ used_at: now })
    .where("token_hash", "=", tokenHash)
    .where("used_at", "is", null)
    .where("expires_at", ">", now)
    .where("user_id", "is", null)
    .returning(["role", "display_name"])
    .executeTakeFirst();
}

/**
 * Marks a sign-in reset link used, if it is still open, and answers whose it is: one statement,
 * as for an invitation.
 */
export async function claimSignInReset(
  db: Kysely<Database>,
  tokenHash: string,
  now: number,
): Promise<number | undefined> {
  const row = await db
    .updateTable("invites")
    .set({ used_at: now })
    .where("token_hash", "=", tokenHash)
    .where("used_at", "is", null)
    .where("expires_at", ">", now)
    .where("user_id", "is not", null)
    .returning(["user_id"])
    .executeTakeFirst();
  return row?.user_id === null || row === undefined ? undefined : Number(row.user_id);
}

/** Closes the user's reset links not used yet (a new one replaces them). */
export async function closeSignInResets(
  db: Kysely<Database>,
  userId: number,
  now: number,
): Promise<void> {
  await db
    .updateTable("invites")
    .set({ used_at: now })
    .where("user_id", "=", userId)
    .where("used_at", "is", null)
    .execute();
}

export async function setInviteUsedBy(
  db: Kysely<Database>,
  tokenHash: string,
  userId: number,
): Promise<void> {
  await db
    .updateTable("invites")
    .set({ used_by: userId })
    .where("token_hash", "=", tokenHash)
    .execute();
}

/**
 * True while the link can still be used (unused, not expired): an invitation for a new user, or
 * with `reset`, a sign-in reset link.
 */
export async function isInviteOpen(
  db: Kysely<Database>,
  tokenHash: string,
  now: number,
  reset = false,
): Promise<boolean> {
  const row = await db
    .selectFrom("invites")
    .select("token_hash")
    .where("token_hash", "=", tokenHash)
    .where("used_at", "is", null)
    .where("expires_at", ">", now)
    .where("user_id", reset ? "is not" : "is", null)
    .executeTakeFirst();
  return row !== undefined;
}
