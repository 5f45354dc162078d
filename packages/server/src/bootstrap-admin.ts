import type { AppContext } from "./app-context.js";
import { isUniqueViolation } from "./db/dialect.js";
import { anyUserExists, insertUserRow } from "./chat/users-repository.js";
import { DEFAULT_TOKEN_TTL_SECONDS } from "./chat/users-service.js";

/**
 * First start of an empty install: creates the user `admin` and returns a token for it, so the
 * operator can sign in. Returns undefined when any user exists (or another process won the race).
 */
export async function bootstrapAdmin(
  ctx: AppContext,
): Promise<{ username: string; token: string } | undefined> {
  if (await anyUserExists(ctx.db)) return undefined;
  const now = ctx.now();
  try {
    const user = await insertUserRow(ctx.db, {
      username: "admin",
      display_name: "Administrator",
      role: "admin",
      status: "active",
      created_at: now,
      updated_at: now,
    });
    const { token } = await ctx.tokens.issue({
      userId: user.id,
      role: "admin",
      ttlSeconds: DEFAULT_TOKEN_TTL_SECONDS,
    });
    return { username: user.username, token };
  } catch (error) {
    if (isUniqueViolation(error)) return undefined;
    throw error;
  }
}
