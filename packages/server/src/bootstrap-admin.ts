import type { Kysely } from "kysely";
import type { AppContext } from "./app-context.js";
import { isUniqueViolation } from "./db/dialect.js";
import type { Database } from "./db/schema.js";
import { anyUserExists, insertUserRow } from "./chat/users-repository.js";
import { DEFAULT_TOKEN_TTL_SECONDS } from "./chat/users-service.js";

/** The user `parley serve` creates on the first start of an empty install. */
export interface FirstAdmin {
  readonly id: number;
  readonly username: string;
}

/**
 * First start of an empty install: creates the user `admin`, so the operator can sign in. Runs
 * under the start lock (createAppContext's `atStart`), so of processes starting together on an
 * empty database exactly one creates it and prints its token. Returns undefined when any user
 * exists.
 */
export async function createFirstAdmin(
  db: Kysely<Database>,
  now: number,
): Promise<FirstAdmin | undefined> {
  if (await anyUserExists(db)) return undefined;
  try {
    const user = await insertUserRow(db, {
      username: "admin",
      display_name: "Administrator",
      role: "admin",
      status: "active",
      created_at: now,
      updated_at: now,
    });
    return { id: user.id, username: user.username };
  } catch (error) {
    // A process of a version without the start lock won the race.
    if (isUniqueViolation(error)) return undefined;
    throw error;
  }
}

/** A token for the first admin (signed with the server's key, which the context holds). */
export async function firstAdminToken(ctx: AppContext, admin: FirstAdmin): Promise<string> {
  const { token } = await ctx.tokens.issue({
    userId: admin.id,
    role: "admin",
    ttlSeconds: DEFAULT_TOKEN_TTL_SECONDS,
  });
  return token;
}
