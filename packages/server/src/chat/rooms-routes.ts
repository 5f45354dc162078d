import type { FastifyPluginAsync } from "fastify";
import type { AppContext } from "../app-context.js";
import { requireRole } from "../auth/require-role.js";
import { listQuerySchema } from "../http/pagination.js";
import { authErrors, listOf, problemSchema } from "../http/schemas.js";
import { idParamsOf, roomSchema } from "./chat-schemas.js";
import { openDm, promoteDm } from "./dms-service.js";
import {
  adminDeleteRoom,
  createRoom,
  deleteRoom,
  getRoom,
  joinRoom,
  leaveRoom,
  listRooms,
} from "./rooms-service.js";

const roomParams = idParamsOf("roomId");
const dmParams = idParamsOf("dmId");
const nameBody = {
  type: "object",
  additionalProperties: false,
  required: ["name"],
  properties: { name: { type: "string", description: "1 to 200 characters, not blank; trimmed" } },
} as const;

/** Rooms and direct messages: create, list, join, leave, delete, promote a DM to a room. */
export const roomsRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  const anyUser = requireRole(ctx);
  const admin = requireRole(ctx, "admin");
  const tags = ["rooms"];
  const security = [{ bearer: [] }];

  app.post<{ Body: { name: string } }>(
    "/api/rooms",
    {
      preHandler: anyUser,
      schema: {
        tags,
        security,
        summary: "Create a room (fires ROOM_CREATED; the creator joins it)",
        body: nameBody,
        response: { 201: roomSchema, 400: problemSchema, 401: problemSchema },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createRoom(ctx, request.principal, request.body)),
  );

  app.get<{ Querystring: { limit: number; cursor?: string } }>(
    "/api/rooms",
    {
      preHandler: anyUser,
      schema: {
        tags,
        security,
        summary: "List the rooms and direct messages you are a member of",
        querystring: { type: "object", properties: listQuerySchema },
        response: { 200: listOf(roomSchema), 400: problemSchema, 401: problemSchema },
      },
    },
    async (request) => listRooms(ctx, request.principal, request.query),
  );

  app.get<{ Params: { roomId: number } }>(
    "/api/rooms/:roomId",
    {
      preHandler: anyUser,
      schema: {
        tags,
        security,
        summary: "Get a room (members and admins)",
        params: roomParams,
        response: { 200: roomSchema, 400: problemSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request) => getRoom(ctx, request.principal, request.params.roomId),
  );

  app.post<{ Params: { roomId: number } }>(
    "/api/rooms/:roomId/join",
    {
      preHandler: anyUser,
      schema: {
        tags,
        security,
        summary: "Join a room (fires USER_JOINED_ROOM)",
        params: roomParams,
        response: {
          200: roomSchema,
          400: problemSchema,
          404: problemSchema,
          409: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) => joinRoom(ctx, request.principal, request.params.roomId),
  );

  app.post<{ Params: { roomId: number } }>(
    "/api/rooms/:roomId/leave",
    {
      preHandler: anyUser,
      schema: {
        tags,
        security,
        summary: "Leave a room or direct message (fires USER_LEFT_ROOM)",
        params: roomParams,
        response: { 204: { type: "null" }, 400: problemSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request, reply) => {
      await leaveRoom(ctx, request.principal, request.params.roomId);
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: { roomId: number } }>(
    "/api/rooms/:roomId",
    {
      preHandler: anyUser,
      schema: {
        tags,
        security,
        summary: "Delete a room you created (fires ROOM_DELETED)",
        params: roomParams,
        response: { 204: { type: "null" }, 400: problemSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request, reply) => {
      await deleteRoom(ctx, request.principal, request.params.roomId);
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: { roomId: number } }>(
    "/api/admin/rooms/:roomId",
    {
      preHandler: admin,
      schema: {
        tags,
        security,
        summary: "Delete any room or direct message as an admin (fires ADMIN_ROOM_DELETED)",
        params: roomParams,
        response: { 204: { type: "null" }, 400: problemSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request, reply) => {
      await adminDeleteRoom(ctx, request.principal, request.params.roomId);
      return reply.code(204).send();
    },
  );

  app.post<{ Body: { userId: number } }>(
    "/api/dms",
    {
      preHandler: anyUser,
      schema: {
        tags,
        security,
        summary: "Open a direct message with a user (201), or get the one already open (200)",
        body: {
          type: "object",
          additionalProperties: false,
          required: ["userId"],
          properties: { userId: { type: "integer", minimum: 1 } },
        },
        response: {
          200: roomSchema,
          201: roomSchema,
          400: problemSchema,
          401: problemSchema,
          404: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const { room, created } = await openDm(ctx, request.principal, request.body.userId);
      return reply.code(created ? 201 : 200).send(room);
    },
  );

  app.post<{ Params: { dmId: number }; Body: { name: string } }>(
    "/api/dms/:dmId/promote",
    {
      preHandler: anyUser,
      schema: {
        tags,
        security,
        summary:
          "Promote a direct message to a named room (fires ROOM_CREATED with convertedFromDm)",
        params: dmParams,
        body: nameBody,
        response: {
          200: roomSchema,
          400: problemSchema,
          404: problemSchema,
          409: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) => promoteDm(ctx, request.principal, request.params.dmId, request.body),
  );
};
