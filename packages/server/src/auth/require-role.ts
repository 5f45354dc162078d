import type { FastifyReply, FastifyRequest } from "fastify";
import type { AppContext } from "../app-context.js";
import type { UserRole } from "../db/schema.js";
import { AppError } from "../errors/app-error.js";
import type { Principal } from "./principal.js";
import { findPrincipalRow } from "./principals-repository.js";
import { CSRF_HEADER, SESSION_COOKIE } from "./session-cookie.js";
import { findLiveSession, isSessionToken } from "./session-service.js";
import { TokenError } from "./token-service.js";
import crypto from "node:crypto";
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
  if (isSessionToken(match[1]!)) return authenticateSession(ctx, match[1]!, "bearer");
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
 * A session's secret, from its cookie or as a bearer token: the session row is read on every
 * request, so logout or a password change ends it in every process at once.
 */
async function authenticateSession(
  ctx: AppContext,
  token: string,
  via: "cookie" | "bearer",
): Promise<Principal> {
  const session = await findLiveSession(ctx, token);
  if (!session) throw unauthorized("the session ended or expired: sign in again");
  if (session.status !== "active") throw unauthorized("the session's user is disabled or deleted");
  return {
    userId: session.user_id,
    username: session.username,
    role: session.role,
    session: { idHash: session.id_hash, csrfToken: session.csrf_token, via },
  };
}

const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The one authentication path of HTTP requests: the bearer token when there is one, else the
 * session cookie. A cookie is sent by the browser whoever made the page, so a cookie-authenticated
 * unsafe request must also carry the session's CSRF value in X-Parley-CSRF (a header another site
 * cannot set without CORS, which Parley does not grant); a bearer token is never sent on its own.
 */
export async function authenticateHttpRequest(
  ctx: AppContext,
  request: FastifyRequest,
): Promise<Principal> {
  const authorization = request.headers.authorization;
  const cookie = request.cookies?.[SESSION_COOKIE];
  if (authorization || !cookie) return authenticateRequest(ctx, authorization);
  const principal = await authenticateSession(ctx, cookie, "cookie");
  if (!SAFE_METHODS.has(request.method) && !csrfMatches(request, principal.session!.csrfToken))
    throw new AppError(
      "csrf_required",
      `a request signed in by cookie must carry the X-Parley-CSRF header with the value of GET /api/auth/csrf`,
    );
  return principal;
}

function csrfMatches(request: FastifyRequest, expected: string): boolean {
  const given = request.headers[CSRF_HEADER];
  if (typeof given !== "string") return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/**
 * Identity-provider subjects are linked per provider: its configured issuer, or its key set's URL
 * when no issuer is configured; without a token provider, the single sign-on issuer (so an admin
 * links the SSO accounts of people who may sign on while sign-up is off).
 */
export function identityIssuer(ctx: AppContext): string {
  return ctx.config.jwtIssuer ?? ctx.config.jwtJwksUrl ?? ctx.config.oidcIssuer ?? "";
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
    request.principal = await authenticateHttpRequest(ctx, request);
    if (roles.length > 0 && !roles.includes(request.principal.role)) {
      throw new AppError("forbidden", `this needs the ${roles.join(" or ")} role`);
    }
  };
  return Object.assign(checkRole, { [AUTH_GUARD]: true as const });
}

/** Marks signInRoute()'s hook: the route rules allow it only under /api/auth/. */
export const SIGN_IN_ROUTE = Symbol("parley.signInRoute");

/**
 * The guard of the few routes that sign people in (login, accepting an invitation, single sign-on,
 * the sign-in options): they take no credentials, and say so here rather than by being left out.
 */
export function signInRoute(): AuthGuard {
  const open = async function noCredentials(): Promise<void> {};
  return Object.assign(open, { [AUTH_GUARD]: true as const, [SIGN_IN_ROUTE]: true as const });
}

/** True when the route's onRequest hooks include an authentication guard. */
export function hasAuthGuard(onRequest: unknown): boolean {
  const hooks = Array.isArray(onRequest) ? onRequest : onRequest ? [onRequest] : [];
  return hooks.some((hook) => typeof hook === "function" && AUTH_GUARD in hook);
}

/** True when the route is one that signs people in (signInRoute()). */
export function isSignInRoute(onRequest: unknown): boolean {
  const hooks = Array.isArray(onRequest) ? onRequest : onRequest ? [onRequest] : [];
  return hooks.some((hook) => typeof hook === "function" && SIGN_IN_ROUTE in hook);
}
