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
    .returning(["role", "display_name"])
    .executeTakeFirst();
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

/** True while the invitation can still be accepted (unused, not expired). */
export async function isInviteOpen(
  db: Kysely<Database>,
  tokenHash: string,
  now: number,
): Promise<boolean> {
  const row = await db
    .selectFrom("invites")
    .select("token_hash")
    .where("token_hash", "=", tokenHash)
    .where("used_at", "is", null)
    .where("expires_at", ">", now)
    .executeTakeFirst();
  return row !== undefined;
}
