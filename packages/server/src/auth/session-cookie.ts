import type { FastifyReply, FastifyRequest } from "fastify";
import type { AppContext } from "../app-context.js";
import { SESSION_TTL_MS, type NewSession } from "./session-service.js";

/** The session cookie: its value is the session secret. */
export const SESSION_COOKIE = "parley_session";

/** The header a cookie-authenticated unsafe request carries, with the value of GET /api/auth/csrf. */
export const CSRF_HEADER = "x-parley-csrf";

/**
 * Secure when the public address is https or the request itself came over TLS: a browser on plain
 * http (a local install) would drop a Secure cookie and never stay signed in.
 */
function secure(ctx: AppContext, request: FastifyRequest): boolean {
  return ctx.config.publicBaseUrl?.startsWith("https:") === true || request.protocol === "https";
}

/** HttpOnly (scripts never read it), SameSite=Lax (not sent on other sites' POSTs), whole site. */
export function setSessionCookie(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  session: NewSession,
): void {
  reply.setCookie(SESSION_COOKIE, session.token, {
    path: "/",
    httpOnly: true,
    sameSite: "lax",
    secure: secure(ctx, request),
    maxAge: Math.floor(SESSION_TTL_MS / 1000),
  });
}

export function clearSessionCookie(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  reply.clearCookie(SESSION_COOKIE, {
    path: "/",
    httpOnly: true,
    sameSite: "lax",
    secure: secure(ctx, request),
  });
}
