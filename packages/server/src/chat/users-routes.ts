import type { FastifyPluginAsync } from "fastify";
import type { AppContext } from "../app-context.js";
import { requireRole } from "../auth/require-role.js";
import { listQuerySchema } from "../http/pagination.js";
import { authErrors, idParams, listOf, problemSchema, timestamp } from "../http/schemas.js";
import {
  createUser,
  deleteUser,
  disableUser,
  getActiveUser,
  issueUserToken,
  listUsers,
  toUserView,
} from "./users-service.js";

const user = {
  type: "object",
  properties: {
    id: { type: "integer" },
    username: { type: "string" },
    displayName: { type: "string" },
    role: { type: "string", enum: ["admin", "bot", "user"] },
    status: { type: "string", enum: ["active", "disabled", "deleted"] },
    createdAt: timestamp,
  },
  required: ["id", "username", "displayName", "role", "status", "createdAt"],
} as const;

/** Admin management of user accounts and their tokens. */
export const usersRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  const admin = requireRole(ctx, "admin");
  const tags = ["users"];
  const security = [{ bearer: [] }];

  app.post<{ Body: { username: string; displayName?: string; role: "admin" | "bot" | "user" } }>(
    "/api/admin/users",
    {
      preHandler: admin,
      schema: {
        tags,
        security,
        summary: "Create a user",
        body: {
          type: "object",
          additionalProperties: false,
          required: ["username", "role"],
          properties: {
            username: { type: "string", pattern: "^[a-z0-9][a-z0-9._-]{0,63}$" },
            displayName: { type: "string", minLength: 1, maxLength: 200 },
            role: { type: "string", enum: ["admin", "bot", "user"] },
          },
        },
        response: { 201: user, 400: problemSchema, 409: problemSchema, ...authErrors },
      },
    },
    async (request, reply) => reply.code(201).send(await createUser(ctx, request.body)),
  );

  app.get<{ Querystring: { limit: number; cursor?: string } }>(
    "/api/admin/users",
    {
      preHandler: admin,
      schema: {
        tags,
        security,
        summary: "List users",
        querystring: { type: "object", properties: listQuerySchema },
        response: { 200: listOf(user), 400: problemSchema, ...authErrors },
      },
    },
    async (request) => listUsers(ctx, request.query),
  );

  app.get<{ Params: { id: number } }>(
    "/api/admin/users/:id",
    {
      preHandler: admin,
      schema: {
        tags,
        security,
        summary: "Get a user",
        params: idParams,
        response: { 200: user, 404: problemSchema, ...authErrors },
      },
    },
    async (request) => toUserView(await getActiveUser(ctx, request.params.id)),
  );

  app.post<{ Params: { id: number }; Body: { ttlSeconds?: number } | undefined }>(
    "/api/admin/users/:id/tokens",
    {
      preHandler: admin,
      schema: {
        tags,
        security,
        summary: "Issue a bearer token for a user",
        params: idParams,
        body: {
          type: "object",
          additionalProperties: false,
          properties: { ttlSeconds: { type: "integer", minimum: 60, maximum: 366 * 24 * 3600 } },
        },
        response: {
          201: {
            type: "object",
            properties: { token: { type: "string" }, expiresAt: timestamp },
            required: ["token", "expiresAt"],
          },
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await issueUserToken(ctx, request.params.id, request.body?.ttlSeconds)),
  );

  app.post<{ Params: { id: number } }>(
    "/api/admin/users/:id/disable",
    {
      preHandler: admin,
      schema: {
        tags,
        security,
        summary: "Disable a user (fires ADMIN_USER_DISABLED)",
        params: idParams,
        response: { 200: user, 404: problemSchema, ...authErrors },
      },
    },
    async (request) => disableUser(ctx, request.principal, request.params.id),
  );

  app.delete<{ Params: { id: number } }>(
    "/api/admin/users/:id",
    {
      preHandler: admin,
      schema: {
        tags,
        security,
        summary: "Delete a user (fires ADMIN_USER_DELETED)",
        params: idParams,
        response: { 204: { type: "null" }, 404: problemSchema, ...authErrors },
      },
    },
    async (request, reply) => {
      await deleteUser(ctx, request.principal, request.params.id);
      return reply.code(204).send();
    },
  );
};
