import type { FastifyPluginAsync } from "fastify";
import type { AppContext } from "../app-context.js";
import { requireRole } from "../auth/require-role.js";
import { listQuerySchema } from "../http/pagination.js";
import { authErrors, listOf, problemSchema } from "../http/schemas.js";
import { idParamsOf, messageSchema } from "./chat-schemas.js";
import { mediaTypeHeader, pickMessageFormat } from "./message-media-type.js";
import { getMessage, listMessages, postRoomMessage, representMessage } from "./messages-service.js";
import { MAX_CONTENT_BYTES } from "./post-message.js";

const roomParams = idParamsOf("roomId");
const messageParams = idParamsOf("roomId", "messageId");

const representationSchema = {
  ...messageSchema,
  properties: {
    ...messageSchema.properties,
    contentRaw: { type: "string", description: "raw and full: content as stored" },
    contentText: { type: "string", description: "text and full: plain text" },
    contentHtml: { type: "string", description: "html and full: sanitized HTML" },
  },
} as const;

/** Post, list and fetch the messages of a room. */
export const messagesRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  const anyUser = requireRole(ctx);
  const adminOrBot = requireRole(ctx, "admin", "bot");
  const tags = ["messages"];
  const security = [{ bearer: [] }];

  app.post<{
    Params: { roomId: number };
    Body: { content?: unknown; contentFormat?: unknown } | undefined;
  }>(
    "/api/rooms/:roomId/messages",
    {
      preHandler: anyUser,
      // The handler maps schema failures itself, so a member gets the same content codes as ingest.
      attachValidation: true,
      schema: {
        tags,
        security,
        summary:
          "Post a message (fires MESSAGE_CREATED; DLP may block it, AI moderation may flag or quarantine it)",
        params: roomParams,
        body: {
          type: "object",
          additionalProperties: false,
          required: ["content"],
          properties: {
            content: {
              type: "string",
              minLength: 1,
              maxLength: MAX_CONTENT_BYTES,
              description: `1 to ${MAX_CONTENT_BYTES} UTF-8 bytes`,
            },
            contentFormat: { type: "string", enum: ["markdown", "html"], default: "markdown" },
          },
        },
        response: {
          201: messageSchema,
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
      const message = await postRoomMessage(
        ctx,
        request.principal,
        request.params.roomId,
        request.body,
        failed,
      );
      return reply.code(201).send(message);
    },
  );

  app.get<{ Params: { roomId: number }; Querystring: { limit: number; cursor?: string } }>(
    "/api/rooms/:roomId/messages",
    {
      preHandler: anyUser,
      schema: {
        tags,
        security,
        summary:
          "List a room's messages, newest first (quarantined and rejected ones only for admins)",
        params: roomParams,
        querystring: { type: "object", properties: listQuerySchema },
        response: {
          200: listOf(messageSchema),
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) => listMessages(ctx, request.principal, request.params.roomId, request.query),
  );

  app.get<{ Params: { roomId: number; messageId: number } }>(
    "/api/rooms/:roomId/messages/:messageId",
    {
      preHandler: adminOrBot,
      schema: {
        tags,
        security,
        summary:
          "Fetch one message with the representation the Accept header asks for (admins and bots)",
        description:
          "Accept `application/vnd.parley.v3+json` or `application/json` (content as stored), " +
          "`application/vnd.parley.v3.raw+json` (adds contentRaw), `.text+json` (adds contentText), " +
          "`.html+json` (adds contentHtml) or `.full+json` (all three). Anything else gets the default. " +
          "The answer is application/json; X-Parley-Media-Type names the representation.",
        params: messageParams,
        headers: { type: "object", properties: { accept: { type: "string" } } },
        response: {
          200: {
            ...representationSchema,
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
