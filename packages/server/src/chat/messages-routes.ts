import type { Static } from "@sinclair/typebox";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  IdParams,
  ListParamsSchema,
  MessageSchema,
  PageOf,
  PostMessageParamsSchema,
  StoredMessageSchema,
} from "@parley/client/wire";
import type { AppContext } from "../app-context.js";
import { requireRole } from "../auth/require-role.js";
import { decodeCursor, pageLimit, toPage } from "../http/pagination.js";
import { authErrors, problemSchema } from "../http/schemas.js";
import { MAX_CONTENT_BYTES, validateMessageBody } from "./content-rules.js";
import { mediaTypeHeader, pickMessageFormat } from "./message-media-type.js";
import { getMessage, listMessages, postRoomMessage, representMessage } from "./messages-service.js";
import { roomForMember } from "./room-access.js";

/** 16384 UTF-8 bytes of content can take six times as many once JSON escapes them (\u0001). */
const MESSAGE_BODY_LIMIT = 6 * MAX_CONTENT_BYTES + 1024;

const roomParams = IdParams("roomId");
const messageParams = IdParams("roomId", "messageId");

/** Post, list and fetch the messages of a room. */
export const messagesRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (
  app,
  { ctx },
) => {
  const anyUser = requireRole(ctx);
  const adminOrBot = requireRole(ctx, "admin", "bot");
  const admin = requireRole(ctx, "admin");
  const tags = ["messages"];
  const security = [{ bearer: [] }];

  // The body is typed as unchecked: with attachValidation the handler also sees bodies that failed.
  app.post<{ Params: Static<typeof roomParams>; Body: unknown }>(
    "/api/rooms/:roomId/messages",
    {
      onRequest: anyUser,
      bodyLimit: MESSAGE_BODY_LIMIT,
      // A body that fails the schema is answered by the content rules first (see the handler).
      attachValidation: true,
      schema: {
        tags,
        security,
        summary:
          "Post a message (fires MESSAGE_CREATED; DLP may block it, AI moderation may flag or quarantine it)",
        params: roomParams,
        body: PostMessageParamsSchema,
        response: {
          201: StoredMessageSchema,
          400: problemSchema,
          404: problemSchema,
          422: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request, reply) => {
      const failed = request.validationError;
      if (failed && failed.validationContext !== "body") throw failed;
      const { roomId } = request.params;
      // Membership before content, so a stranger learns nothing about what the room accepts.
      await roomForMember(ctx.db, roomId, request.principal);
      // The content rules answer first, with the same codes as ingest (content_required rather
      // than a schema error); what they do not cover, such as an unknown field, answers next.
      const message = validateMessageBody(request.body);
      if (failed) throw failed;
      return reply.code(201).send(await postRoomMessage(ctx, request.principal, roomId, message));
    },
  );

  app.get(
    "/api/rooms/:roomId/messages",
    {
      onRequest: anyUser,
      schema: {
        tags,
        security,
        summary:
          "List a room's messages, newest first (quarantined and rejected ones only for admins)",
        params: roomParams,
        querystring: ListParamsSchema,
        response: {
          200: PageOf(StoredMessageSchema),
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) =>
      toPage(
        await listMessages(ctx, request.principal, request.params.roomId, {
          beforeId: decodeCursor(request.query.cursor),
          limit: pageLimit(request.query),
        }),
      ),
  );

  app.get(
    "/api/admin/rooms/:roomId/messages",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary:
          "List any room's or direct message's messages as an admin, hidden ones included (newest first)",
        description:
          "The one way for an admin who is not a member to read a direct message: the member routes answer 403.",
        params: roomParams,
        querystring: ListParamsSchema,
        response: {
          200: PageOf(StoredMessageSchema),
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) =>
      toPage(
        await listMessages(
          ctx,
          request.principal,
          request.params.roomId,
          { beforeId: decodeCursor(request.query.cursor), limit: pageLimit(request.query) },
          { asAdmin: true },
        ),
      ),
  );

  app.get(
    "/api/rooms/:roomId/messages/:messageId",
    {
      onRequest: adminOrBot,
      schema: {
        tags,
        security,
        summary:
          "Fetch one message with the representation the Accept header asks for (admins and bots; a direct message's only for its members)",
        description:
          "Accept `application/vnd.parley.v3+json` or `application/json` (content as stored), " +
          "`application/vnd.parley.v3.raw+json` (adds contentRaw), `.text+json` (adds contentText), " +
          "`.html+json` (adds contentHtml) or `.full+json` (all three). Anything else gets the default. " +
          "The answer is application/json; X-Parley-Media-Type names the representation.",
        params: messageParams,
        headers: { type: "object", properties: { accept: { type: "string" } } },
        response: {
          200: {
            ...MessageSchema,
            headers: {
              "X-Parley-Media-Type": { type: "string", description: "e.g. parley.v3; format=full" },
            },
          },
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request, reply) => {
      const format = pickMessageFormat(request.headers.accept);
      const message = await getMessage(
        ctx,
        request.principal,
        request.params.roomId,
        request.params.messageId,
      );
      return reply
        .header("Vary", "Accept")
        .header("X-Parley-Media-Type", mediaTypeHeader(format))
        .type("application/json; charset=utf-8")
        .send(representMessage(message, format));
    },
  );
};
