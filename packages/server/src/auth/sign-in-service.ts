import type { AppContext } from "../app-context.js";
import {
  findUserRow,
  findUserRowByUsername,
  setPasswordHash,
  type UserRow,
} from "../chat/users-repository.js";
import { toUserView, type UserView } from "../chat/users-service.js";
import { AppError } from "../errors/app-error.js";
import { admitLoginAttempt } from "./login-throttle.js";
import {
  hashPassword,
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  verifyPassword,
} from "./password-hashing.js";
import type { Principal } from "./principal.js";
import { deleteUserSessions } from "./sessions-repository.js";
import { startSession, type NewSession } from "./session-service.js";

export interface SignedInSession {
  session: NewSession;
  user: UserView;
}

const INVALID_CREDENTIALS = "the username or password is wrong";

/**
 * Password sign-in. Whatever was wrong (no such user, a disabled one, one without a password, a
 * wrong password) the answer is the same 401 invalid_credentials, after the same work: a verify
 * against the stored hash, or against a dummy hash when there is none. Attempts are rate limited
 * per username and per address (login-throttle.ts). Each success starts a fresh session.
 */
export async function login(
  ctx: AppContext,
  input: { username: string; password: string },
  address: string,
): Promise<SignedInSession> {
  const attempt = await admitLoginAttempt(ctx, input.username, address);
  const user = await findUserRowByUsername(ctx.db, input.username.toLowerCase());
  const usable = user !== undefined && user.status === "active";
  const matches = await verifyPassword(usable ? user.password_hash : null, input.password);
  if (!usable || !matches) throw new AppError("invalid_credentials", INVALID_CREDENTIALS);
  await attempt.succeeded();
  return { session: await startSession(ctx, user.id), user: toUserView(user) };
}

/** The signed-in user (any role), as the directory shows them. */
export async function currentUser(ctx: AppContext, principal: Principal): Promise<UserView> {
  const row = await findUserRow(ctx.db, principal.userId);
  if (!row) throw new AppError("not_found", `no user ${principal.userId}`);
  return toUserView(row);
}

/**
 * Changes the caller's password after checking the current one (rate limited as a login, so a
 * borrowed session cannot guess it), then ends the user's other sessions: a password change is
 * what people do when they fear someone else is signed in.
 */
export async function changePassword(
  ctx: AppContext,
  principal: Principal,
  input: { currentPassword: string; newPassword: string },
  address: string,
): Promise<void> {
  const attempt = await admitLoginAttempt(ctx, principal.username, address);
  const user = await findUserRow(ctx.db, principal.userId);
  if (!(await verifyPassword(user?.password_hash, input.currentPassword)))
    throw new AppError("invalid_credentials", "the current password is wrong");
  await attempt.succeeded();
  await setPasswordHash(ctx.db, principal.userId, await hashPassword(input.newPassword), ctx.now());
  await deleteUserSessions(ctx.db, principal.userId, principal.session?.idHash);
}

/** Checks the length rule where no schema did (the CLI). */
export function checkPasswordRule(password: string): void {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH || length > MAX_PASSWORD_LENGTH)
    throw new AppError(
      "validation_failed",
      `a password is ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`,
    );
}

/**
 * Sets a user's password (`parley users set-password`), ending their sessions: whoever held one
 * signs in with the new password.
 */
export async function setUserPassword(
  ctx: AppContext,
  username: string,
  password: string,
): Promise<UserRow> {
  checkPasswordRule(password);
  const user = await findUserRowByUsername(ctx.db, username);
  if (!user || user.status === "deleted") throw new AppError("not_found", `no user "${username}"`);
  await setPasswordHash(ctx.db, user.id, await hashPassword(password), ctx.now());
  await deleteUserSessions(ctx.db, user.id, undefined);
  return user;
}
