import type { FastifyInstance, RouteOptions } from "fastify";
import fp from "fastify-plugin";
import { hasAuthGuard, isSignInRoute } from "../auth/require-role.js";

/**
 * Rules every route obeys, checked or applied as it is added:
 *
 * - Every API route outside /api/public/ authenticates in onRequest, before its body is read: a
 *   route registered without the guard there would parse and validate strangers' bodies, so it
 *   fails the start instead. The routes that sign people in take no credentials: they declare it
 *   with signInRoute(), which only routes under /api/auth/ may use.
 * - A body whose fields are all optional may be left out entirely (POST .../tokens, .../test):
 *   Fastify would otherwise validate the missing body against `type: "object"` and answer 400.
 */
export interface RouteRulesOptions {
  /** Sees each route as it was added, before a rule changes its schema (the tests list them so). */
  onRoute?: ((route: RouteOptions) => void) | undefined;
}

export const routeRules = fp(async function routeRules(
  app: FastifyInstance,
  options: RouteRulesOptions,
) {
  app.addHook("onRoute", (route) => {
    const url = route.url ?? route.path;
    if (!url.startsWith("/api/") || url.startsWith("/api/public/")) return;
    // The live stream reads no body: its first WebSocket frame carries the token, checked before
    // anything else is accepted (a close with 4401 otherwise; see realtime/stream-gateway.ts).
    if ((route as { websocket?: boolean }).websocket === true) return;
    if (isSignInRoute(route.onRequest) && !url.startsWith("/api/auth/"))
      throw new Error(
        `${String(route.method)} ${url}: only /api/auth/ routes may be sign-in routes`,
      );
    if (!hasAuthGuard(route.onRequest)) {
      throw new Error(
        `${String(route.method)} ${url} must authenticate in onRequest (onRequest: requireRole(ctx, ...))`,
      );
    }
  });

  if (options.onRoute) app.addHook("onRoute", options.onRoute);

  app.addHook("onRoute", (route) => {
    const body = route.schema?.body as { type?: unknown; required?: unknown[] } | undefined;
    if (body && body.type === "object" && !(body.required && body.required.length > 0)) {
      route.schema = { ...route.schema, body: { ...body, type: ["object", "null"] } };
    }
  });
});
