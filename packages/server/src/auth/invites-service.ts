import crypto from "node:crypto";
import type { AppContext } from "../app-context.js";
import { insertUserRow } from "../chat/users-repository.js";
import { toUserView } from "../chat/users-service.js";
import { isUniqueViolation } from "../db/dialect.js";
import type { UserRole } from "../db/schema.js";
import { AppError } from "../errors/app-error.js";
import { isoTime } from "../events/event-catalogue.js";
import { claimInvite, insertInvite, isInviteOpen, setInviteUsedBy } from "./invites-repository.js";
import { hashPassword } from "./password-hashing.js";
import { startSession } from "./session-service.js";
import type { SignedInSession } from "./sign-in-service.js";

/** An invitation is good for 7 days, once. */
export const INVITE_TTL_MS = 7 * 24 * 3600 * 1000;

function tokenHash(token: string): string {
  return crypto.createHash("sha256").update(token).digest("hex");
}

/**
 * Where an invitation is accepted: the chat page, with the token in the fragment, so it never
 * reaches a server's or a proxy's request log.
 */
export function inviteUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/app/#invite=${token}`;
}

/** A single-use invitation for a new user of `role`; its token is stored only as a hash. */
export async function createInvite(
  ctx: AppContext,
  input: { role: UserRole; displayName?: string | undefined; createdBy: number | null },
  baseUrl: string,
): Promise<{ url: string; expiresAt: string; token: string }> {
  const now = ctx.now();
  const token = crypto.randomBytes(32).toString("base64url");
  const expiresAt = now + INVITE_TTL_MS;
  await insertInvite(ctx.db, {
    token_hash: tokenHash(token),
    role: input.role,
    display_name: input.displayName ?? null,
    created_by: input.createdBy,
    created_at: now,
    expires_at: expiresAt,
    used_at: null,
    used_by: null,
  });
  return { url: inviteUrl(baseUrl, token), expiresAt: isoTime(expiresAt), token };
}

/**
 * Creates the invited user with their username and password and signs them in. The invitation is
 * claimed and the user created in one transaction: a taken username gives the link back unused,
 * and of two acceptances at once only one claims it.
 */
export async function acceptInvite(
  ctx: AppContext,
  input: { token: string; username: string; password: string },
): Promise<SignedInSession> {
  const hash = tokenHash(input.token);
  const refused = () =>
    new AppError("invalid_invite", "this invitation is unknown, already used or expired");
  // Looked up before the password is hashed: a stranger's guesses cost a read, not an argon2 hash.
  if (!(await isInviteOpen(ctx.db, hash, ctx.now()))) throw refused();
  const passwordHash = await hashPassword(input.password);
  const user = await ctx.database.transaction(async (tx) => {
    const now = ctx.now();
    const invite = await claimInvite(tx.db, hash, now);
    if (!invite) throw refused();
    try {
      const row = await insertUserRow(tx.db, {
        username: input.username,
        display_name: invite.display_name ?? input.username,
        role: invite.role,
        status: "active",
        created_at: now,
        updated_at: now,
        password_hash: passwordHash,
      });
      await setInviteUsedBy(tx.db, hash, row.id);
      return row;
    } catch (error) {
      if (isUniqueViolation(error))
        throw new AppError("username_taken", `the username "${input.username}" is taken`);
      throw error;
    }
  });
  return { session: await startSession(ctx, user.id), user: toUserView(user) };
}
