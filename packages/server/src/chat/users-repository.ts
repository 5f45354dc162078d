import type { Insertable, Kysely, Selectable, Transaction } from "kysely";
import { lockRowsInIdOrder } from "../db/dialect.js";
import type { Database, UserStatus, UsersTable } from "../db/schema.js";
import { startsWith } from "../db/starts-with.js";

/**
 * Queries on `users`. A deleted account keeps its row (its messages keep their sender), so reads
 * by id return it and the caller decides what "deleted" means for it. Every function takes the
 * database or a transaction.
 */
export type UserRow = Selectable<UsersTable>;

/** Throws the dialect's unique violation when the username is taken. */
export async function insertUserRow(
  db: Kysely<Database>,
  values: Insertable<UsersTable>,
): Promise<UserRow> {
  return db.insertInto("users").values(values).returningAll().executeTakeFirstOrThrow();
}

export async function findUserRow(db: Kysely<Database>, id: number): Promise<UserRow | undefined> {
  return db.selectFrom("users").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function findUserRowByUsername(
  db: Kysely<Database>,
  username: string,
): Promise<UserRow | undefined> {
  return db.selectFrom("users").selectAll().where("username", "=", username).executeTakeFirst();
}

/** True once any account exists, deleted ones included: first-start set-up runs on none. */
export async function anyUserExists(db: Kysely<Database>): Promise<boolean> {
  const row = await db.selectFrom("users").select("id").limit(1).executeTakeFirst();
  return row !== undefined;
}

/** Accounts not deleted, ascending ids after `afterId`; `limit + 1` rows (one more says more). */
export async function listUserRows(
  db: Kysely<Database>,
  page: { afterId: number | undefined; limit: number },
): Promise<UserRow[]> {
  let select = db
    .selectFrom("users")
    .selectAll()
    .where("status", "!=", "deleted")
    .orderBy("id", "asc")
    .limit(page.limit + 1);
  if (page.afterId !== undefined) select = select.where("id", ">", page.afterId);
  return select.execute();
}

export async function setUserStatus(
  db: Kysely<Database>,
  id: number,
  status: UserStatus,
  now: number,
): Promise<UserRow | undefined> {
  return db
    .updateTable("users")
    .set({ status, updated_at: now })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
}

/** A new role and/or display name. */
export async function updateUserRow(
  db: Kysely<Database>,
  id: number,
  changes: { role?: UserRow["role"] | undefined; displayName?: string | undefined },
  now: number,
): Promise<UserRow | undefined> {
  return db
    .updateTable("users")
    .set({
      updated_at: now,
      ...(changes.role === undefined ? {} : { role: changes.role }),
      ...(changes.displayName === undefined ? {} : { display_name: changes.displayName }),
    })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
}

/**
 * How many enabled admins there are, their rows locked until the end of `trx` (in id order, on
 * PostgreSQL), so that two transactions each about to take an admin away (two admins disabling or
 * deleting each other at once) queue up here, and the second counts what the first left. The
 * count is read again once the locks are held: what a transaction that held one of them changed
 * has committed by then. SQLite's single writer serializes such transactions already.
 */
export async function lockEnabledAdmins(trx: Transaction<Database>): Promise<number> {
  const enabledAdmins = () =>
    trx
      .selectFrom("users")
      .select("id")
      .where("role", "=", "admin")
      .where("status", "=", "active")
      .orderBy("id")
      .execute();
  const ids = (await enabledAdmins()).map((row) => row.id);
  await lockRowsInIdOrder(trx, "users", ids);
  return (await enabledAdmins()).length;
}

/** The name a user's messages are posted under; the caller knows the user exists. */
export async function readDisplayName(db: Kysely<Database>, id: number): Promise<string> {
  const row = await db
    .selectFrom("users")
    .select("display_name")
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
  return row.display_name;
}

/** Sets (or, with null, removes) the user's password hash. */
export async function setPasswordHash(
  db: Kysely<Database>,
  id: number,
  passwordHash: string | null,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable("users")
    .set({ password_hash: passwordHash, updated_at: now })
    .where("id", "=", id)
    .where("status", "!=", "deleted")
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * The directory: active accounts (disabled and deleted ones left out) whose username or display
 * name starts with `query` (case-insensitive), by username, at most `limit`. Without a query, the
 * first by username. A directory of thousands reads its rows by username (the unique index) and
 * stops at `limit` matches.
 */
export async function findDirectoryUserRows(
  db: Kysely<Database>,
  query: string | undefined,
  limit: number,
): Promise<Pick<UserRow, "id" | "username" | "display_name">[]> {
  let select = db
    .selectFrom("users")
    .select(["id", "username", "display_name"])
    .where("status", "=", "active")
    .orderBy("username", "asc")
    .limit(limit);
  if (query)
    select = select.where((eb) =>
      eb.or([startsWith("username", query), startsWith("display_name", query)]),
    );
  return select.execute();
}
