import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { AppContext } from "../app-context.js";
import { AppError } from "../errors/app-error.js";
import { problemSchema } from "../http/schemas.js";
import { publicBaseUrl } from "./auth-routes.js";
import { createOidcSignIn } from "./oidc-sign-in.js";
import { signInRoute } from "./require-role.js";
import { setSessionCookie } from "./session-cookie.js";
import { startSession } from "./session-service.js";

/** The cookie that binds a sign-on to the browser that started it: its `state`. */
const STATE_COOKIE = "parley_oidc_state";
const CALLBACK_PATH = "/api/auth/oidc/callback";

/**
 * Where the browser may be sent once signed in: the chat page or a page of the admin UI, by path
 * only (never another site: an open redirect would lend Parley's name to phishing).
 */
const ReturnToQuerySchema = Type.Object(
  {
    returnTo: Type.Optional(
      Type.String({ pattern: "^/(app|admin)(/[A-Za-z0-9/_-]*)?$", maxLength: 200 }),
    ),
  },
  { additionalProperties: false },
);

const redirect = {
  302: { description: "Redirect (Location)", type: "null" },
} as const;

/**
 * Single sign-on (OpenID Connect): GET /api/auth/oidc/start sends the browser to the provider;
 * the provider sends it back to GET /api/auth/oidc/callback, which starts a session and sends it
 * on to the chat page (/app/). Both answer 404 when single sign-on is not configured.
 */
export const oidcRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  const sso = createOidcSignIn(ctx);
  const open = signInRoute();
  const tags = ["sign-in"];
  const configured = () => {
    if (!sso) throw new AppError("not_found", "single sign-on is not configured");
    return sso;
  };

  app.get(
    "/api/auth/oidc/start",
    {
      onRequest: open,
      schema: {
        tags,
        security: [],
        summary: "Start single sign-on: redirects to the provider (state, nonce, PKCE S256)",
        description:
          "returnTo: where the browser goes once signed in, /app/ (default) or a path under /admin/.",
        querystring: ReturnToQuerySchema,
        response: { ...redirect, 404: problemSchema, 503: problemSchema },
      },
    },
    async (request, reply) => {
      const redirectUri = publicBaseUrl(ctx, request) + CALLBACK_PATH;
      const { url, state } = await configured().start(
        redirectUri,
        request.query.returnTo ?? "/app/",
      );
      reply.setCookie(STATE_COOKIE, state, {
        path: "/api/auth/oidc/",
        httpOnly: true,
        // Lax: sent when the provider redirects the browser back (a top-level GET).
        sameSite: "lax",
        secure: redirectUri.startsWith("https:"),
        maxAge: 600,
      });
      return reply.redirect(url, 302);
    },
  );

  app.get(
    CALLBACK_PATH,
    {
      onRequest: open,
      schema: {
        tags,
        security: [],
        summary:
          "The provider's redirect back: starts a session and redirects to /app/ (or the start's returnTo)",
        response: {
          ...redirect,
          401: problemSchema,
          403: problemSchema,
          404: problemSchema,
          503: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const redirectUri = publicBaseUrl(ctx, request) + CALLBACK_PATH;
      const query = request.url.includes("?")
        ? request.url.slice(request.url.indexOf("?") + 1)
        : "";
      const { userId, returnTo } = await configured().finish({
        redirectUri,
        query,
        state: request.cookies[STATE_COOKIE],
      });
      reply.clearCookie(STATE_COOKIE, { path: "/api/auth/oidc/" });
      setSessionCookie(ctx, request, reply, await startSession(ctx, userId));
      return reply.redirect(returnTo, 302);
    },
  );
};
