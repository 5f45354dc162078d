import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  AddMemberParamsSchema,
  CreateRoomParamsSchema,
  IdParams,
  ListAdminRoomsParamsSchema,
  ListRoomsParamsSchema,
  MarkReadParamsSchema,
  OpenDmParamsSchema,
  PageOf,
  ReadMarkerSchema,
  RoomNameParamsSchema,
  RoomSchema,
} from "@parley/client/wire";
import type { AppContext } from "../app-context.js";
import type { StreamGateway } from "../realtime/stream-gateway.js";
import { requireRole } from "../auth/require-role.js";
import { decodeCursor, pageLimit, toPage } from "../http/pagination.js";
import { authErrors, problemSchema } from "../http/schemas.js";
import { openDm, promoteDm } from "./dms-service.js";
import { markRead } from "./mark-read.js";
import {
  addRoomMember,
  adminDeleteRoom,
  createRoom,
  deleteRoom,
  getRoom,
  joinRoom,
  leaveRoom,
  listAllRooms,
  listRooms,
} from "./rooms-service.js";

const roomParams = IdParams("roomId");
const dmParams = IdParams("dmId");

export interface RoomsRoutesOptions {
  ctx: AppContext;
  /**
   * Tells a user's live-stream connections that their read marker moved, or that they became a
   * member of a room or DM by someone's action.
   */
  stream: Pick<StreamGateway, "announceRead" | "announceRoomAdded">;
}

/**
 * Rooms and direct messages: create, list (joined with unread counts, or public to browse), join,
 * add members, read markers, leave, delete, open a DM by id or username, promote a DM to a room.
 */
export const roomsRoutes: FastifyPluginAsyncTypebox<RoomsRoutesOptions> = async (
  app,
  { ctx, stream },
) => {
  const anyUser = requireRole(ctx);
  const admin = requireRole(ctx, "admin");
  const tags = ["rooms"];
  const security = [{ bearer: [] }];

  app.post(
    "/api/rooms",
    {
      onRequest: anyUser,
      schema: {
        tags,
        security,
        summary: "Create a public or private room (fires ROOM_CREATED; the creator joins it)",
        body: CreateRoomParamsSchema,
        response: { 201: RoomSchema, 400: problemSchema, 401: problemSchema },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createRoom(ctx, request.principal, request.body)),
  );

  app.get(
    "/api/rooms",
    {
      onRequest: anyUser,
      schema: {
        tags,
        security,
        summary:
          "List your rooms and direct messages with unread and mention counts (scope=joined), or the public rooms (scope=public)",
        querystring: ListRoomsParamsSchema,
        response: { 200: PageOf(RoomSchema), 400: problemSchema, 401: problemSchema },
      },
    },
    async (request) =>
      toPage(
        await listRooms(ctx, request.principal, {
          scope: request.query.scope,
          query: request.query.query,
          afterId: decodeCursor(request.query.cursor),
          limit: pageLimit(request.query),
        }),
      ),
  );

  app.get(
    "/api/rooms/:roomId",
    {
      onRequest: anyUser,
      schema: {
        tags,
        security,
        summary: "Get a room (members and admins)",
        params: roomParams,
        response: { 200: RoomSchema, 400: problemSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request) => getRoom(ctx, request.principal, request.params.roomId),
  );

  app.post(
    "/api/rooms/:roomId/join",
    {
      onRequest: anyUser,
      schema: {
        tags,
        security,
        summary: "Join a room (fires USER_JOINED_ROOM)",
        params: roomParams,
        response: {
          200: RoomSchema,
          400: problemSchema,
          404: problemSchema,
          409: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) => joinRoom(ctx, request.principal, request.params.roomId),
  );

  app.post(
    "/api/rooms/:roomId/members",
    {
      onRequest: anyUser,
      schema: {
        tags,
        security,
        summary:
          "Add someone to a room you are a member of (fires USER_JOINED_ROOM; their stream connections get a room_added frame)",
        params: roomParams,
        body: AddMemberParamsSchema,
        response: {
          200: RoomSchema,
          400: problemSchema,
          404: problemSchema,
          409: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) =>
      addRoomMember(ctx, request.principal, request.params.roomId, request.body.userId, (notice) =>
        stream.announceRoomAdded(notice),
      ),
  );

  app.put(
    "/api/rooms/:roomId/read",
    {
      onRequest: anyUser,
      schema: {
        tags,
        security,
        summary:
          "Move your read marker forward to a message (never back); answers the unread and mention counts after it",
        params: roomParams,
        body: MarkReadParamsSchema,
        response: { 200: ReadMarkerSchema, 400: problemSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request) =>
      markRead(ctx, request.principal, request.params.roomId, request.body.messageId, (read) =>
        stream.announceRead(read),
      ),
  );

  app.post(
    "/api/rooms/:roomId/leave",
    {
      onRequest: anyUser,
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

  app.delete(
    "/api/rooms/:roomId",
    {
      onRequest: anyUser,
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

  app.get(
    "/api/admin/rooms",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary:
          "List every live room and direct message as an admin, private ones included, oldest first (query: a prefix of the name)",
        querystring: ListAdminRoomsParamsSchema,
        response: { 200: PageOf(RoomSchema), 400: problemSchema, ...authErrors },
      },
    },
    async (request) =>
      toPage(
        await listAllRooms(ctx, request.principal, {
          query: request.query.query,
          kind: request.query.kind,
          afterId: decodeCursor(request.query.cursor),
          limit: pageLimit(request.query),
        }),
      ),
  );

  app.delete(
    "/api/admin/rooms/:roomId",
    {
      onRequest: admin,
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

  app.post(
    "/api/dms",
    {
      onRequest: anyUser,
      schema: {
        tags,
        security,
        summary:
          "Open a direct message with a user, by userId or username (201; both members' stream connections get a room_added frame), or get the one already open (200)",
        body: OpenDmParamsSchema,
        response: {
          200: RoomSchema,
          201: RoomSchema,
          400: problemSchema,
          401: problemSchema,
          404: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const { room, created } = await openDm(ctx, request.principal, request.body ?? {}, (notice) =>
        stream.announceRoomAdded(notice),
      );
      return reply.code(created ? 201 : 200).send(room);
    },
  );

  app.post(
    "/api/dms/:dmId/promote",
    {
      onRequest: anyUser,
      schema: {
        tags,
        security,
        summary:
          "Promote a direct message to a named room (fires ROOM_CREATED with convertedFromDm)",
        params: dmParams,
        body: RoomNameParamsSchema,
        response: {
          200: RoomSchema,
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
