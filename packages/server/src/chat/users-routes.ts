import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  CreateUserParamsSchema,
  DirectoryUsersSchema,
  FindUsersParamsSchema,
  IdParamsSchema,
  IssuedTokenSchema,
  IssueTokenParamsSchema,
  ListParamsSchema,
  InviteSchema,
  PageOf,
  UpdateUserParamsSchema,
  UserSchema,
} from "@parley/client/wire";
import { publicBaseUrl } from "../auth/auth-routes.js";
import { createSignInReset } from "../auth/sign-in-reset.js";
import type { AppContext } from "../app-context.js";
import { requireRole } from "../auth/require-role.js";
import { decodeCursor, pageLimit, toPage } from "../http/pagination.js";
import { authErrors, problemSchema } from "../http/schemas.js";
import {
  createUser,
  deleteUser,
  disableUser,
  enableUser,
  findUsers,
  getActiveUser,
  issueUserToken,
  listUsers,
  toUserView,
  updateUser,
} from "./users-service.js";

/** The people directory (every signed-in user), and admin management of accounts and tokens. */
export const usersRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  const admin = requireRole(ctx, "admin");
  const anyUser = requireRole(ctx);
  const tags = ["users"];
  const security = [{ bearer: [] }];

  app.get(
    "/api/users",
    {
      onRequest: anyUser,
      schema: {
        tags,
        security,
        summary:
          "Find people: active users whose username or display name starts with query (at most 20)",
        querystring: FindUsersParamsSchema,
        response: { 200: DirectoryUsersSchema, 400: problemSchema, 401: problemSchema },
      },
    },
    async (request) => ({ items: await findUsers(ctx, request.query) }),
  );

  app.post(
    "/api/admin/users",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: "Create a user",
        body: CreateUserParamsSchema,
        response: { 201: UserSchema, 400: problemSchema, 409: problemSchema, ...authErrors },
      },
    },
    async (request, reply) => reply.code(201).send(await createUser(ctx, request.body)),
  );

  app.get(
    "/api/admin/users",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: "List users",
        querystring: ListParamsSchema,
        response: { 200: PageOf(UserSchema), 400: problemSchema, ...authErrors },
      },
    },
    async (request) =>
      toPage(
        await listUsers(ctx, {
          afterId: decodeCursor(request.query.cursor),
          limit: pageLimit(request.query),
        }),
      ),
  );

  app.get(
    "/api/admin/users/:id",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: "Get a user",
        params: IdParamsSchema,
        response: { 200: UserSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request) => toUserView(await getActiveUser(ctx, request.params.id)),
  );

  app.post(
    "/api/admin/users/:id/tokens",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: "Issue a bearer token for a user",
        params: IdParamsSchema,
        // All fields optional, so the body may be left out (app.ts lets it be null).
        body: IssueTokenParamsSchema,
        response: {
          201: IssuedTokenSchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await issueUserToken(ctx, request.params.id, request.body?.ttlSeconds)),
  );

  app.post(
    "/api/admin/users/:id/disable",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: "Disable a user (fires ADMIN_USER_DISABLED); never the last enabled admin",
        params: IdParamsSchema,
        response: { 200: UserSchema, 404: problemSchema, 409: problemSchema, ...authErrors },
      },
    },
    async (request) => disableUser(ctx, request.principal, request.params.id),
  );

  app.patch(
    "/api/admin/users/:id",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary:
          "Change a user's role (tokens issued with the old one stop working; never the last enabled admin's) or display name",
        params: IdParamsSchema,
        body: UpdateUserParamsSchema,
        response: {
          200: UserSchema,
          400: problemSchema,
          404: problemSchema,
          409: problemSchema,
          ...authErrors,
        },
      },
    },
    // A JSON null body passes the body schema: it changes nothing, as {} does.
    async (request) => updateUser(ctx, request.params.id, request.body ?? {}),
  );

  app.post(
    "/api/admin/users/:id/enable",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: "Enable a disabled user again",
        params: IdParamsSchema,
        response: { 200: UserSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request) => enableUser(ctx, request.params.id),
  );

  app.post(
    "/api/admin/users/:id/reset-sign-in",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary:
          "Reset a user's sign-in: ends their sessions, removes their password, and answers a single-use link (7 days) to set a new one",
        params: IdParamsSchema,
        response: { 201: InviteSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await createSignInReset(
            ctx,
            request.params.id,
            publicBaseUrl(ctx, request),
            request.principal.userId,
          ),
        ),
  );

  app.delete(
    "/api/admin/users/:id",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: "Delete a user (fires ADMIN_USER_DELETED); never the last enabled admin",
        params: IdParamsSchema,
        response: { 204: { type: "null" }, 404: problemSchema, 409: problemSchema, ...authErrors },
      },
    },
    async (request, reply) => {
      await deleteUser(ctx, request.principal, request.params.id);
      return reply.code(204).send();
    },
  );
};
