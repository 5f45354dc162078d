import crypto from "node:crypto";
import type { AppContext } from "../app-context.js";
import { findUserRow, setPasswordHash } from "../chat/users-repository.js";
import { toUserView } from "../chat/users-service.js";
import { AppError } from "../errors/app-error.js";
import { isoTime } from "../events/event-catalogue.js";
import {
  claimSignInReset,
  closeSignInResets,
  insertInvite,
  isInviteOpen,
} from "./invites-repository.js";
import { INVITE_TTL_MS } from "./invites-service.js";
import { hashPassword } from "./password-hashing.js";
import { deleteUserSessions } from "./sessions-repository.js";
import { startSession } from "./session-service.js";
import type { SignedInSession } from "./sign-in-service.js";

function tokenHash(token: string): string {
  return crypto.createHash("sha256").update(token).digest("hex");
}

/** Where a reset link is used: the chat page, the token in the fragment (never in a log). */
export function signInResetUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/app/#reset=${token}`;
}

/**
 * "Reset sign-in" (an admin, for someone who lost their password or whose account may be in
 * other hands): ends every session of the user, removes their password, closes their earlier
 * reset links, and answers a new single-use link, good for 7 days, on which they choose a new
 * password. The invitation machinery carries it: a row of `invites` bound to the user. Their
 * bearer tokens are left alone (revoke-tokens does that): scripts keep running.
 */
export async function createSignInReset(
  ctx: AppContext,
  userId: number,
  baseUrl: string,
  createdBy: number | null,
): Promise<{ url: string; expiresAt: string }> {
  const token = crypto.randomBytes(32).toString("base64url");
  const expiresAt = await ctx.database.transaction(async (tx) => {
    const now = ctx.now();
    const user = await findUserRow(tx.db, userId);
    if (!user || user.status === "deleted") throw new AppError("not_found", `no user ${userId}`);
    await setPasswordHash(tx.db, userId, null, now);
    await deleteUserSessions(tx.db, userId, undefined);
    await closeSignInResets(tx.db, userId, now);
    await insertInvite(tx.db, {
      token_hash: tokenHash(token),
      role: user.role,
      display_name: null,
      created_by: createdBy,
      created_at: now,
      expires_at: now + INVITE_TTL_MS,
      used_at: null,
      used_by: null,
      user_id: userId,
    });
    return now + INVITE_TTL_MS;
  });
  return { url: signInResetUrl(baseUrl, token), expiresAt: isoTime(expiresAt) };
}

/**
 * Sets the new password of a reset link's user and signs them in. The link is claimed in the same
 * transaction that sets the password, so it works once; a disabled user's link sets the password
 * but signs nobody in (401 from then on, as for any sign-in of theirs).
 */
export async function resetPassword(
  ctx: AppContext,
  input: { token: string; password: string },
): Promise<SignedInSession> {
  const hash = tokenHash(input.token);
  const refused = () =>
    new AppError("invalid_invite", "this link is unknown, already used or expired");
  // Looked up before the password is hashed: a stranger's guesses cost a read, not an argon2 hash.
  if (!(await isInviteOpen(ctx.db, hash, ctx.now(), true))) throw refused();
  const passwordHash = await hashPassword(input.password);
  const user = await ctx.database.transaction(async (tx) => {
    const now = ctx.now();
    const userId = await claimSignInReset(tx.db, hash, now);
    if (userId === undefined) throw refused();
    const row = await findUserRow(tx.db, userId);
    if (!row || row.status === "deleted") throw refused();
    await setPasswordHash(tx.db, userId, passwordHash, now);
    return row;
  });
  if (user.status !== "active")
    throw new AppError("invalid_credentials", "the account is disabled: ask an admin");
  return { session: await startSession(ctx, user.id), user: toUserView(user) };
}
