import type { FastifyReply, FastifyRequest } from "fastify";
import type { AppContext } from "../app-context.js";
import type { UserRole } from "../db/schema.js";
import { AppError } from "../errors/app-error.js";
import type { Principal } from "./principal.js";
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
  const query = ctx.db.selectFrom("users").select(["id", "username", "role", "status"]);
  const user = verified.external
    ? await query.where("username", "=", verified.subject).executeTakeFirst()
    : await query.where("id", "=", Number(verified.subject)).executeTakeFirst();
  if (!user || user.status !== "active")
    throw unauthorized("the token's user is disabled or deleted");
  if (verified.role !== undefined && verified.role !== user.role)
    throw unauthorized("the token's role no longer matches the user");
  return { userId: user.id, username: user.username, role: user.role };
}

/** A preHandler that lets through callers with one of `roles` (any authenticated user when omitted). */
export function requireRole(ctx: AppContext, ...roles: UserRole[]) {
  return async function checkRole(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    request.principal = await authenticateRequest(ctx, request.headers.authorization);
    if (roles.length > 0 && !roles.includes(request.principal.role)) {
      throw new AppError("forbidden", `this needs the ${roles.join(" or ")} role`);
    }
  };
}
