import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { CallSchema, CallStateSchema, IdParams } from "@parley/client/wire";
import type { AppContext } from "../app-context.js";
import { requireRole } from "../auth/require-role.js";
import { authErrors, problemSchema } from "../http/schemas.js";
import { getCall, joinCall, leaveCall } from "./calls-service.js";
import { withholdsStaticCredentials } from "./ice-servers.js";

const roomParams = IdParams("roomId");

/** A room's call: join, leave, and its state with the ICE servers (signalling is on the stream). */
export const callsRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  const anyUser = requireRole(ctx);
  const tags = ["calls"];
  const security = [{ bearer: [] }];
  if (withholdsStaticCredentials(ctx.config))
    app.log.warn(
      "PARLEY_ICE_SERVERS holds a static TURN credential that is not handed out: set PARLEY_TURN_SECRET (per-user credentials), or PARLEY_ICE_SERVERS_STATIC_CREDENTIALS=true",
    );

  app.post(
    "/api/rooms/:roomId/call/join",
    {
      onRequest: anyUser,
      schema: {
        tags,
        security,
        summary: "Join the room's call, starting it if needed (fires USER_JOINED_ROOM via call)",
        params: roomParams,
        response: { 200: CallSchema, 400: problemSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request) => joinCall(ctx, request.principal, request.params.roomId),
  );

  app.post(
    "/api/rooms/:roomId/call/leave",
    {
      onRequest: anyUser,
      schema: {
        tags,
        security,
        summary: "Leave the room's call (fires USER_LEFT_ROOM via call)",
        params: roomParams,
        response: { 204: { type: "null" }, 400: problemSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request, reply) => {
      await leaveCall(ctx, request.principal, request.params.roomId);
      return reply.code(204).send();
    },
  );

  app.get(
    "/api/rooms/:roomId/call",
    {
      onRequest: anyUser,
      schema: {
        tags,
        security,
        summary:
          "The room's current call, its participants and the ICE servers to use (TURN credentials of the caller's own, short-lived; none for bots)",
        params: roomParams,
        response: { 200: CallStateSchema, 400: problemSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request) => getCall(ctx, request.principal, request.params.roomId),
  );
};
