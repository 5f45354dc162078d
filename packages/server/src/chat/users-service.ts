import type { DirectoryUser, User } from "@parley/client/wire";
import type { AppContext } from "../app-context.js";
import { isUniqueViolation } from "../db/dialect.js";
import type { UserRole } from "../db/schema.js";
import { AppError } from "../errors/app-error.js";
import { eventData, isoTime } from "../events/event-catalogue.js";
import type { Principal } from "../auth/principal.js";
import { keysetSlice, type KeysetSlice } from "../db/keyset-slice.js";
import type { Tx } from "../db/unit-of-work.js";
import { removeFromEveryRoom } from "./rooms-repository.js";
import {
  findDirectoryUserRows,
  findUserRow,
  findUserRowByUsername,
  insertUserRow,
  listUserRows,
  lockEnabledAdmins,
  setUserStatus,
  updateUserRow,
  type UserRow,
} from "./users-repository.js";

/** A user as the API shows it: the wire's User, so a view that drifts from it does not compile. */
export type UserView = User;

export function toUserView(row: UserRow): UserView {
  return {
    id: row.id,
    username: row.username,
    displayName: row.display_name,
    role: row.role,
    status: row.status,
    createdAt: isoTime(row.created_at),
  };
}

export const DEFAULT_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

export async function createUser(
  ctx: AppContext,
  input: { username: string; displayName?: string | undefined; role: UserRole },
): Promise<UserView> {
  const now = ctx.now();
  try {
    const row = await insertUserRow(ctx.db, {
      username: input.username,
      display_name: input.displayName ?? input.username,
      role: input.role,
      status: "active",
      created_at: now,
      updated_at: now,
    });
    return toUserView(row);
  } catch (error) {
    if (isUniqueViolation(error))
      throw new AppError("username_taken", `the username "${input.username}" is taken`);
    throw error;
  }
}

export async function listUsers(
  ctx: AppContext,
  page: { afterId?: number | undefined; limit: number },
): Promise<KeysetSlice<UserView>> {
  const rows = await listUserRows(ctx.db, { afterId: page.afterId, limit: page.limit });
  return keysetSlice(rows, page.limit, toUserView);
}

/** The most people one directory look-up answers. */
export const DIRECTORY_LIMIT = 20;

/**
 * People to find, for every signed-in user: active accounts whose username or display name starts
 * with `query` (case-insensitive), by username, at most 20; no role, status or dates.
 */
export async function findUsers(
  ctx: AppContext,
  input: { query?: string | undefined; limit?: number | undefined },
): Promise<DirectoryUser[]> {
  const query = input.query?.trim().replace(/^@/, "") || undefined;
  const limit = Math.min(input.limit ?? DIRECTORY_LIMIT, DIRECTORY_LIMIT);
  const rows = await findDirectoryUserRows(ctx.db, query, limit);
  return rows.map((row) => ({
    id: row.id,
    username: row.username,
    displayName: row.display_name,
    avatarUrl: null,
  }));
}

export async function getActiveUser(ctx: AppContext, id: number): Promise<UserRow> {
  const row = await findUserRow(ctx.db, id);
  if (!row || row.status === "deleted") throw new AppError("not_found", `no user ${id}`);
  return row;
}

export async function findUserByUsername(
  ctx: AppContext,
  username: string,
): Promise<UserRow | undefined> {
  return findUserRowByUsername(ctx.db, username);
}

export async function issueUserToken(
  ctx: AppContext,
  id: number,
  ttlSeconds: number = DEFAULT_TOKEN_TTL_SECONDS,
): Promise<{ token: string; tokenId: string; expiresAt: string }> {
  const user = await getActiveUser(ctx, id);
  if (user.status !== "active") throw new AppError("not_found", `user ${id} is disabled`);
  const { token, tokenId, expiresAt } = await ctx.tokens.issue({
    userId: user.id,
    role: user.role,
    ttlSeconds,
  });
  return { token, tokenId, expiresAt: isoTime(expiresAt) };
}

/**
 * Refuses (409 last_admin) to take away the last enabled admin: with none left, only
 * `parley token create` on the server gets one back. Called in the transaction that then disables
 * or deletes `user`, after the admins' rows are locked, so two admins removing each other at
 * once cannot both pass.
 */
async function keepOneAdmin(tx: Tx, user: UserRow): Promise<void> {
  if (user.role !== "admin" || user.status !== "active") return;
  if ((await lockEnabledAdmins(tx.db)) <= 1)
    throw new AppError(
      "last_admin",
      `${user.username} is the last enabled admin: create or enable another admin first`,
    );
}

/**
 * Disables an account (its tokens stop working) and fires ADMIN_USER_DISABLED once. The last
 * enabled admin cannot be disabled (409 last_admin).
 */
export async function disableUser(
  ctx: AppContext,
  actor: Principal,
  id: number,
): Promise<UserView> {
  return ctx.database.transaction(async (tx) => {
    const user = await findUserRow(tx.db, id);
    if (!user || user.status === "deleted") throw new AppError("not_found", `no user ${id}`);
    if (user.status === "disabled") return toUserView(user);
    await keepOneAdmin(tx, user);
    const row = (await setUserStatus(tx.db, id, "disabled", ctx.now()))!;
    await tx.emit(
      "ADMIN_USER_DISABLED",
      eventData.adminUserAction({ username: user.username, adminActor: actor.username }),
    );
    return toUserView(row);
  });
}

/**
 * Enables a disabled account again: its tokens issued before it was disabled work again, unless
 * revoked (disable them with revoke-tokens first when that is not wanted).
 */
export async function enableUser(ctx: AppContext, id: number): Promise<UserView> {
  const user = await findUserRow(ctx.db, id);
  if (!user || user.status === "deleted") throw new AppError("not_found", `no user ${id}`);
  if (user.status === "active") return toUserView(user);
  return toUserView((await setUserStatus(ctx.db, id, "active", ctx.now()))!);
}

/**
 * Changes a user's role or display name. A new role takes effect at once: sessions read the role
 * on every request, and tokens issued with the old role stop working (authentication checks the
 * token's role against the user's). The last enabled admin keeps the role (409 last_admin).
 */
export async function updateUser(
  ctx: AppContext,
  id: number,
  changes: { role?: UserRole | undefined; displayName?: string | undefined },
): Promise<UserView> {
  return ctx.database.transaction(async (tx) => {
    const user = await findUserRow(tx.db, id);
    if (!user || user.status === "deleted") throw new AppError("not_found", `no user ${id}`);
    if (changes.role !== undefined && changes.role !== "admin") await keepOneAdmin(tx, user);
    const displayName = changes.displayName?.trim();
    if (displayName === "")
      throw new AppError("validation_failed", "a display name is not empty", {
        field: "body.displayName",
      });
    return toUserView(
      (await updateUserRow(tx.db, id, { role: changes.role, displayName }, ctx.now()))!,
    );
  });
}

/**
 * Deletes an account: it is marked deleted (its messages keep their sender), leaves every room,
 * and its tokens stop working. Fires ADMIN_USER_DELETED. The last enabled admin cannot be deleted
 * (409 last_admin), not even by themselves.
 */
export async function deleteUser(ctx: AppContext, actor: Principal, id: number): Promise<void> {
  await ctx.database.transaction(async (tx) => {
    const user = await findUserRow(tx.db, id);
    if (!user || user.status === "deleted") throw new AppError("not_found", `no user ${id}`);
    await keepOneAdmin(tx, user);
    await setUserStatus(tx.db, id, "deleted", ctx.now());
    await removeFromEveryRoom(tx.db, id);
    await tx.emit(
      "ADMIN_USER_DELETED",
      eventData.adminUserAction({ username: user.username, adminActor: actor.username }),
    );
  });
}
