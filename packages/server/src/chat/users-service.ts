import type { AppContext } from "../app-context.js";
import { isUniqueViolation } from "../db/dialect.js";
import type { UserRole, UsersTable } from "../db/schema.js";
import { AppError } from "../errors/app-error.js";
import { eventData, isoTime } from "../events/event-catalogue.js";
import { inTransaction } from "../events/in-transaction.js";
import type { Principal } from "../auth/principal.js";
import type { Selectable } from "kysely";
import { decodeCursor, toPage, type Page } from "../http/pagination.js";

export interface UserView {
  id: number;
  username: string;
  displayName: string;
  role: UserRole;
  status: "active" | "disabled" | "deleted";
  createdAt: string;
}

export function toUserView(row: Selectable<UsersTable>): UserView {
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
    const row = await ctx.db
      .insertInto("users")
      .values({
        username: input.username,
        display_name: input.displayName ?? input.username,
        role: input.role,
        status: "active",
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toUserView(row);
  } catch (error) {
    if (isUniqueViolation(error))
      throw new AppError("username_taken", `the username "${input.username}" is taken`);
    throw error;
  }
}

export async function listUsers(
  ctx: AppContext,
  query: { limit: number; cursor?: string | undefined },
): Promise<Page<UserView>> {
  const after = decodeCursor(query.cursor);
  let select = ctx.db
    .selectFrom("users")
    .selectAll()
    .where("status", "!=", "deleted")
    .orderBy("id", "asc")
    .limit(query.limit + 1);
  if (after !== undefined) select = select.where("id", ">", after);
  return toPage(await select.execute(), query.limit, toUserView);
}

export async function getActiveUser(ctx: AppContext, id: number): Promise<Selectable<UsersTable>> {
  const row = await ctx.db.selectFrom("users").selectAll().where("id", "=", id).executeTakeFirst();
  if (!row || row.status === "deleted") throw new AppError("not_found", `no user ${id}`);
  return row;
}

export async function findUserByUsername(
  ctx: AppContext,
  username: string,
): Promise<Selectable<UsersTable> | undefined> {
  return ctx.db.selectFrom("users").selectAll().where("username", "=", username).executeTakeFirst();
}

export async function issueUserToken(
  ctx: AppContext,
  id: number,
  ttlSeconds: number = DEFAULT_TOKEN_TTL_SECONDS,
): Promise<{ token: string; expiresAt: string }> {
  const user = await getActiveUser(ctx, id);
  if (user.status !== "active") throw new AppError("not_found", `user ${id} is disabled`);
  const { token, expiresAt } = await ctx.tokens.issue({
    userId: user.id,
    role: user.role,
    ttlSeconds,
  });
  return { token, expiresAt: isoTime(expiresAt) };
}

/** Disables an account (its tokens stop working) and fires ADMIN_USER_DISABLED once. */
export async function disableUser(
  ctx: AppContext,
  actor: Principal,
  id: number,
): Promise<UserView> {
  return inTransaction(ctx, async (tx) => {
    const user = await tx.db
      .selectFrom("users")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst();
    if (!user || user.status === "deleted") throw new AppError("not_found", `no user ${id}`);
    if (user.status === "disabled") return toUserView(user);
    const row = await tx.db
      .updateTable("users")
      .set({ status: "disabled", updated_at: ctx.now() })
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await tx.emit(
      "ADMIN_USER_DISABLED",
      eventData.adminUserAction({ username: user.username, adminActor: actor.username }),
    );
    return toUserView(row);
  });
}

/**
 * Deletes an account: it is marked deleted (its messages keep their sender), leaves every room,
 * and its tokens stop working. Fires ADMIN_USER_DELETED.
 */
export async function deleteUser(ctx: AppContext, actor: Principal, id: number): Promise<void> {
  await inTransaction(ctx, async (tx) => {
    const user = await tx.db
      .selectFrom("users")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst();
    if (!user || user.status === "deleted") throw new AppError("not_found", `no user ${id}`);
    await tx.db
      .updateTable("users")
      .set({ status: "deleted", updated_at: ctx.now() })
      .where("id", "=", id)
      .execute();
    await tx.db.deleteFrom("room_members").where("user_id", "=", id).execute();
    await tx.emit(
      "ADMIN_USER_DELETED",
      eventData.adminUserAction({ username: user.username, adminActor: actor.username }),
    );
  });
}
