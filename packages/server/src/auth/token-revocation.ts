import type { AppContext } from "../app-context.js";
import { findUserRow } from "../chat/users-repository.js";
import { MAX_TOKEN_TTL_SECONDS } from "../config/server-keys.js";
import { AppError } from "../errors/app-error.js";
import {
  insertRevokedToken,
  revokeUserTokensBefore,
  upsertUserIdentity,
} from "./principals-repository.js";
import { identityIssuer } from "./require-role.js";

/**
 * Revokes one token by its id (`jti`, shown as `tokenId` when the token is issued). Unknown ids
 * are accepted too (the answer tells nothing about which ids exist); the row is kept for as long
 * as any token can live.
 */
export async function revokeToken(ctx: AppContext, tokenId: string): Promise<void> {
  const now = ctx.now();
  await insertRevokedToken(ctx.db, tokenId, now, now + MAX_TOKEN_TTL_SECONDS * 1000);
}

/** Revokes every token the user holds now; tokens issued later work. */
export async function revokeUserTokens(ctx: AppContext, userId: number): Promise<void> {
  if (!(await revokeUserTokensBefore(ctx.db, userId, ctx.now())))
    throw new AppError("not_found", `no user ${userId}`);
}

/** Links an identity-provider subject to a local user: tokens with that `sub` act as the user. */
export async function linkIdentity(
  ctx: AppContext,
  userId: number,
  subject: string,
): Promise<{ userId: number; issuer: string; subject: string }> {
  if (!ctx.config.jwtJwksUrl && !ctx.config.oidcIssuer)
    throw new AppError(
      "validation_failed",
      "no identity provider is configured (PARLEY_JWT_JWKS_URL or PARLEY_OIDC_ISSUER)",
    );
  const user = await findUserRow(ctx.db, userId);
  if (!user || user.status === "deleted") throw new AppError("not_found", `no user ${userId}`);
  const issuer = identityIssuer(ctx);
  await upsertUserIdentity(ctx.db, { issuer, subject, userId, now: ctx.now() });
  return { userId, issuer, subject };
}
