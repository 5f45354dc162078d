import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  CreateUserParamsSchema,
  DirectoryUsersSchema,
  FindUsersParamsSchema,
  IdParamsSchema,
  IssuedTokenSchema,
  IssueTokenParamsSchema,
  ListParamsSchema,
  PageOf,
  UserSchema,
} from "@parley/client/wire";
import type { AppContext } from "../app-context.js";
import { requireRole } from "../auth/require-role.js";
import { decodeCursor, pageLimit, toPage } from "../http/pagination.js";
import { authErrors, problemSchema } from "../http/schemas.js";
import {
  createUser,
  deleteUser,
  disableUser,
  findUsers,
  getActiveUser,
  issueUserToken,
  listUsers,
  toUserView,
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
