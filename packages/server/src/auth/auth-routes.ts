import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyRequest } from "fastify";
import {
  AcceptInviteParamsSchema,
  AuthProvidersSchema,
  ChangePasswordParamsSchema,
  CreateInviteParamsSchema,
  CsrfTokenSchema,
  InviteSchema,
  LoginParamsSchema,
  ResetPasswordParamsSchema,
  SignedInSchema,
  UserSchema,
} from "@parley/client/wire";
import type { AppContext } from "../app-context.js";
import { AppError } from "../errors/app-error.js";
import { isoTime } from "../events/event-catalogue.js";
import { authErrors, problemSchema } from "../http/schemas.js";
import { acceptInvite, createInvite } from "./invites-service.js";
import { resetPassword } from "./sign-in-reset.js";
import { requireRole, signInRoute } from "./require-role.js";
import { clearSessionCookie, SESSION_COOKIE, setSessionCookie } from "./session-cookie.js";
import { endSession, sessionIdHash } from "./session-service.js";
import { changePassword, currentUser, login, type SignedInSession } from "./sign-in-service.js";

/** The address links are built on: PARLEY_PUBLIC_BASE_URL, else the one the request came to. */
export function publicBaseUrl(ctx: AppContext, request: FastifyRequest): string {
  return ctx.config.publicBaseUrl ?? `${request.protocol}://${request.host}`;
}

/**
 * Password sign-in and sessions, the signed-in user, invitations (docs/chat-api.md, "Sign-in").
 * Login, accepting an invitation and the sign-in options take no credentials (signInRoute());
 * every other route authenticates by bearer token or session cookie, as everywhere.
 */
export const authRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  const anyone = requireRole(ctx);
  const admin = requireRole(ctx, "admin");
  const open = signInRoute();
  const tags = ["sign-in"];
  const security: { [scheme: string]: string[] }[] = [{ bearer: [] }, { session: [] }];

  /** Sets the new session's cookie, ending the one the browser had (it is not carried over). */
  const signedIn = async (
    request: FastifyRequest,
    reply: Parameters<typeof setSessionCookie>[2],
    { session, user }: SignedInSession,
  ) => {
    const previous = request.cookies[SESSION_COOKIE];
    if (previous) await endSession(ctx, sessionIdHash(previous));
    setSessionCookie(ctx, request, reply, session);
    return { token: session.token, expiresAt: isoTime(session.expiresAt), user };
  };

  app.post(
    "/api/auth/login",
    {
      onRequest: open,
      schema: {
        tags,
        security: [],
        summary: "Sign in with a username and password: sets the parley_session cookie",
        description:
          "Every failure answers the same 401 invalid_credentials. Failed attempts are limited per username and per address (429 with Retry-After).",
        body: LoginParamsSchema,
        response: {
          200: SignedInSchema,
          400: problemSchema,
          401: problemSchema,
          429: problemSchema,
        },
      },
    },
    async (request, reply) => signedIn(request, reply, await login(ctx, request.body, request.ip)),
  );

  app.post(
    "/api/auth/logout",
    {
      onRequest: anyone,
      schema: {
        tags,
        security,
        summary: "End this session (in every process at once) and clear its cookie",
        response: { 204: { type: "null" }, ...authErrors },
      },
    },
    async (request, reply) => {
      if (request.principal.session) await endSession(ctx, request.principal.session.idHash);
      clearSessionCookie(ctx, request, reply);
      return reply.code(204).send();
    },
  );

  app.get(
    "/api/auth/csrf",
    {
      onRequest: anyone,
      schema: {
        tags,
        security,
        summary: "The value of the X-Parley-CSRF header for this session's unsafe requests",
        response: { 200: CsrfTokenSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request) => {
      const session = request.principal.session;
      if (!session)
        throw new AppError(
          "not_found",
          "this request has no session: requests with a bearer token need no CSRF header",
        );
      return { csrfToken: session.csrfToken };
    },
  );

  app.get(
    "/api/auth/providers",
    {
      onRequest: open,
      schema: {
        tags,
        security: [],
        summary: "How people may sign in: passwords, and single sign-on when configured",
        response: { 200: AuthProvidersSchema },
      },
    },
    async () => ({
      password: true,
      oidc: ctx.config.oidcIssuer
        ? { name: ctx.config.oidcName, startUrl: "/api/auth/oidc/start" }
        : null,
    }),
  );

  app.post(
    "/api/auth/accept-invite",
    {
      onRequest: open,
      schema: {
        tags,
        security: [],
        summary: "Accept an invitation: creates the user and signs in (the answer of login)",
        body: AcceptInviteParamsSchema,
        response: { 200: SignedInSchema, 400: problemSchema, 409: problemSchema },
      },
    },
    async (request, reply) => signedIn(request, reply, await acceptInvite(ctx, request.body)),
  );

  app.post(
    "/api/auth/reset-password",
    {
      onRequest: open,
      schema: {
        tags,
        security: [],
        summary:
          "Set a new password with a sign-in reset link's token, and sign in (the answer of login)",
        body: ResetPasswordParamsSchema,
        response: { 200: SignedInSchema, 400: problemSchema, 401: problemSchema },
      },
    },
    async (request, reply) => signedIn(request, reply, await resetPassword(ctx, request.body)),
  );

  app.get(
    "/api/me",
    {
      onRequest: anyone,
      schema: {
        tags,
        security,
        summary: "The signed-in user",
        response: { 200: UserSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request) => currentUser(ctx, request.principal),
  );

  app.put(
    "/api/me/password",
    {
      onRequest: anyone,
      schema: {
        tags,
        security,
        summary: "Change your password; ends your other sessions",
        body: ChangePasswordParamsSchema,
        response: { 204: { type: "null" }, 400: problemSchema, 429: problemSchema, ...authErrors },
      },
    },
    async (request, reply) => {
      await changePassword(ctx, request.principal, request.body, request.ip);
      return reply.code(204).send();
    },
  );

  app.post(
    "/api/admin/invites",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: "Invite someone: a single-use link, good for 7 days, that creates their user",
        body: CreateInviteParamsSchema,
        response: { 201: InviteSchema, 400: problemSchema, ...authErrors },
      },
    },
    async (request, reply) => {
      const { url, expiresAt } = await createInvite(
        ctx,
        { ...request.body, createdBy: request.principal.userId },
        publicBaseUrl(ctx, request),
      );
      return reply.code(201).send({ url, expiresAt });
    },
  );
};
