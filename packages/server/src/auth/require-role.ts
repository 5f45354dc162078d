import type { FastifyReply, FastifyRequest } from "fastify";
import type { AppContext } from "../app-context.js";
import type { UserRole } from "../db/schema.js";
import { AppError } from "../errors/app-error.js";
import type { Principal } from "./principal.js";
import { findPrincipalRow } from "./principals-repository.js";
import { TokenError } from "./token-service.js";
import "./principal.js";

const BEARER = { "WWW-Authenticate": 'Bearer realm="parley"' };

function unauthorized(detail: string): AppError {
  return new AppError(
    "unauthorized",
    detail,
    {},
    { ...BEARER, "WWW-Authenticate": `Bearer realm="parley", error="invalid_token"` },
  );
}

/**
 * Resolves the bearer token to an active user. The user row is read on every request, so a
 * disabled or deleted user's tokens stop working at once, and the role in force is the stored one.
 */
export async function authenticateRequest(
  ctx: AppContext,
  authorization: string | undefined,
): Promise<Principal> {
  if (!authorization) throw new AppError("unauthorized", "missing bearer token", {}, BEARER);
  const match = /^Bearer\s+([A-Za-z0-9._~+/=-]+)$/i.exec(authorization.trim());
  if (!match) throw unauthorized("Authorization header must be: Bearer <token>");
  let verified;
  try {
    verified = await ctx.tokens.verify(match[1]!);
  } catch (error) {
    throw unauthorized(error instanceof TokenError ? error.message : "invalid token");
  }
  const user = await findPrincipalRow(
    ctx.db,
    verified.external
      ? { issuer: identityIssuer(ctx), subject: verified.subject }
      : { id: Number(verified.subject) },
    verified.tokenId,
  );
  if (!user && verified.external)
    throw unauthorized("this identity-provider subject is not linked to a Parley user");
  if (!user || user.status !== "active")
    throw unauthorized("the token's user is disabled or deleted");
  if (
    Number(user.token_revoked) !== 0 ||
    revokedByTime(verified.issuedAt, user.tokens_revoked_before)
  )
    throw unauthorized("the token was revoked");
  if (verified.role !== undefined && verified.role !== user.role)
    throw unauthorized("the token's role no longer matches the user");
  return { userId: user.id, username: user.username, role: user.role };
}

/**
 * Identity-provider subjects are linked per provider: its configured issuer, or its key set's URL
 * when no issuer is configured.
 */
export function identityIssuer(ctx: AppContext): string {
  return ctx.config.jwtIssuer ?? ctx.config.jwtJwksUrl ?? "";
}

/**
 * "Revoke all" revokes every token issued up to that moment. `iat` counts whole seconds, so a
 * token issued in the same second as the revocation is revoked too (rather than one issued just
 * before it surviving); a token without `iat` is revoked by any "revoke all".
 */
function revokedByTime(issuedAt: number | undefined, revokedBefore: number | null): boolean {
  if (revokedBefore === null || revokedBefore === undefined) return false;
  return issuedAt === undefined || issuedAt <= Math.floor(Number(revokedBefore) / 1000);
}

/** Marks the hooks requireRole() builds, so app.ts can check that every API route has one. */
export const AUTH_GUARD = Symbol("parley.authGuard");

export type AuthGuard = ((request: FastifyRequest, reply: FastifyReply) => Promise<void>) & {
  [AUTH_GUARD]: true;
};

/**
 * An `onRequest` hook that lets through callers with one of `roles` (any authenticated user when
 * omitted). It must run in onRequest, before the body is read: a caller without a valid token or
 * role is answered 401 / 403 without Parley parsing or validating a byte of what it sent.
 */
export function requireRole(ctx: AppContext, ...roles: UserRole[]): AuthGuard {
  const checkRole = async function checkRole(
    request: FastifyRequest,
    _reply: FastifyReply,
  ): Promise<void> {
    request.principal = await authenticateRequest(ctx, request.headers.authorization);
    if (roles.length > 0 && !roles.includes(request.principal.role)) {
      throw new AppError("forbidden", `this needs the ${roles.join(" or ")} role`);
    }
  };
  return Object.assign(checkRole, { [AUTH_GUARD]: true as const });
}

/** True when the route's onRequest hooks include an authentication guard. */
export function hasAuthGuard(onRequest: unknown): boolean {
  const hooks = Array.isArray(onRequest) ? onRequest : onRequest ? [onRequest] : [];
  return hooks.some((hook) => typeof hook === "function" && AUTH_GUARD in hook);
}
