import type { Kysely } from "kysely";
import type { Database, UserRole, UserStatus } from "../db/schema.js";

/** What authenticating a session reads: the session and its user, in one query. */
export interface SessionPrincipalRow {
  id_hash: string;
  csrf_token: string;
  expires_at: number;
  user_id: number;
  username: string;
  role: UserRole;
  status: UserStatus;
}

export async function insertSession(
  db: Kysely<Database>,
  session: { idHash: string; userId: number; csrfToken: string; now: number; expiresAt: number },
): Promise<void> {
  await db
    .insertInto("sessions")
    .values({
      id_hash: session.idHash,
      user_id: session.userId,
      csrf_token: session.csrfToken,
      created_at: session.now,
      expires_at: session.expiresAt,
    })
    .execute();
}

/**
 * The session by the hash of its secret, with its user: read on every request a session makes, so
 * a deleted row (logout, a password change) or a disabled user stops it at once, in every process.
 */
export async function findSessionPrincipal(
  db: Kysely<Database>,
  idHash: string,
): Promise<SessionPrincipalRow | undefined> {
  return db
    .selectFrom("sessions")
    .innerJoin("users", "users.id", "sessions.user_id")
    .select([
      "sessions.id_hash",
      "sessions.csrf_token",
      "sessions.expires_at",
      "users.id as user_id",
      "users.username",
      "users.role",
      "users.status",
    ])
    .where("sessions.id_hash", "=", idHash)
    .executeTakeFirst();
}

export async function deleteSession(db: Kysely<Database>, idHash: string): Promise<void> {
  await db.deleteFrom("sessions").where("id_hash", "=", idHash).execute();
}

/** Ends every session of the user but `keepIdHash` (the one changing the password). */
export async function deleteUserSessions(
  db: Kysely<Database>,
  userId: number,
  keepIdHash: string | undefined,
): Promise<number> {
  let query = db.deleteFrom("sessions").where("user_id", "=", userId);
  if (keepIdHash !== undefined) query = query.where("id_hash", "!=", keepIdHash);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Drops sessions that expired (they are refused anyway; this keeps the table small). */
export async function deleteExpiredSessions(db: Kysely<Database>, now: number): Promise<void> {
  await db.deleteFrom("sessions").where("expires_at", "<=", now).execute();
}
