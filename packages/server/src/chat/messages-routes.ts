import type { Static } from "@sinclair/typebox";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  EditMessageParamsSchema,
  IdParams,
  ListMessagesParamsSchema,
  MessageListItemSchema,
  MessageRevisionsSchema,
  MessageSchema,
  PageOf,
  PostMessageParamsSchema,
  ReactionParamsSchema,
  StoredMessageSchema,
} from "@parley/client/wire";
import type { MessageListItem } from "@parley/client/wire";
import type { AppContext } from "../app-context.js";
import { requireRole } from "../auth/require-role.js";
import { AppError } from "../errors/app-error.js";
import {
  decodeChangeCursor,
  decodeCursor,
  encodeChangeCursor,
  pageLimit,
  toPage,
  type Page,
} from "../http/pagination.js";
import { authErrors, problemSchema } from "../http/schemas.js";
import { MAX_CONTENT_BYTES, validateMessageBody } from "./content-rules.js";
import { mediaTypeHeader, pickMessageFormat } from "./message-media-type.js";
import { checkMessageEditable } from "./edit-message.js";
import {
  deleteRoomMessage,
  editRoomMessage,
  getMessage,
  getRevisions,
  listMessageChanges,
  listMessages,
  postRoomMessage,
  representMessage,
} from "./messages-service.js";
import { setReaction } from "./react-to-message.js";
import { roomForMember } from "./room-access.js";

/** 16384 UTF-8 bytes of content can take six times as many once JSON escapes them (\u0001). */
const MESSAGE_BODY_LIMIT = 6 * MAX_CONTENT_BYTES + 1024;

const roomParams = IdParams("roomId");
const messageParams = IdParams("roomId", "messageId");

/** `?threadId=`, `?updatedSince=`, `?limit=`, `?cursor=`, as the route received them. */
interface ListQuery {
  limit?: number | undefined;
  cursor?: string | undefined;
  threadId?: number | undefined;
  updatedSince?: string | undefined;
}

/**
 * A room's messages for `query`: top-level (newest first), a thread's replies (oldest first), or
 * the changes since a time (oldest change first, its own cursor), of the room or of one thread.
 */
async function listPage(
  ctx: AppContext,
  principal: Parameters<typeof listMessages>[1],
  roomId: number,
  query: ListQuery,
  options: { asAdmin?: boolean } = {},
): Promise<Page<MessageListItem>> {
  const limit = pageLimit(query);
  if (query.updatedSince !== undefined) {
    const since = Date.parse(query.updatedSince);
    if (Number.isNaN(since))
      throw new AppError("validation_failed", "updatedSince must be an ISO-8601 time", {
        field: "querystring.updatedSince",
      });
    const slice = await listMessageChanges(
      ctx,
      principal,
      roomId,
      { since, after: decodeChangeCursor(query.cursor), threadId: query.threadId, limit },
      options,
    );
    return { items: slice.items, nextCursor: slice.last ? encodeChangeCursor(slice.last) : null };
  }
  return toPage(
    await listMessages(
      ctx,
      principal,
      roomId,
      { cursorId: decodeCursor(query.cursor), threadId: query.threadId, limit },
      options,
    ),
  );
}

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
      config: { handsTraceDown: true },
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
      const { threadId, fileIds } = request.body as { threadId?: unknown; fileIds?: unknown };
      return reply.code(201).send(
        await postRoomMessage(ctx, request.principal, roomId, message, {
          threadId,
          fileIds,
          trace: request.trace,
        }),
      );
    },
  );

  app.patch<{ Params: Static<typeof messageParams>; Body: unknown }>(
    "/api/rooms/:roomId/messages/:messageId",
    {
      onRequest: anyUser,
      bodyLimit: MESSAGE_BODY_LIMIT,
      attachValidation: true,
      schema: {
        tags,
        security,
        summary:
          "Edit your message (fires MESSAGE_UPDATED; the same content rules, DLP and moderation as a post)",
        description:
          "Only the author (an admin, too, edits only their own: 403 not_author). Each edit adds a revision; " +
          "the same content and format answer 200 and fire nothing. A deleted message answers 410 message_deleted.",
        params: messageParams,
        body: EditMessageParamsSchema,
        response: {
          200: StoredMessageSchema,
          400: problemSchema,
          404: problemSchema,
          410: problemSchema,
          422: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) => {
      const failed = request.validationError;
      if (failed && failed.validationContext !== "body") throw failed;
      const { roomId, messageId } = request.params;
      const principal = request.principal;
      // Membership and authorship before content, so no one else learns what the room accepts.
      await roomForMember(ctx.db, roomId, principal);
      await checkMessageEditable(ctx, {
        roomId,
        messageId,
        editor: { userId: principal.userId, username: principal.username },
      });
      const message = validateMessageBody(request.body);
      if (failed) throw failed;
      return editRoomMessage(ctx, principal, roomId, messageId, message);
    },
  );

  app.delete(
    "/api/rooms/:roomId/messages/:messageId",
    {
      onRequest: anyUser,
      schema: {
        tags,
        security,
        summary:
          "Delete a message: its author or an admin (fires MESSAGE_DELETED; the content and every revision are erased)",
        description:
          "Lists show a deleted message as a tombstone {id, roomId, threadId, deleted: true, deletedAt, replyCount, lastReplyAt}; " +
          "fetching or editing it answers 410 message_deleted. Its id is never reused.",
        params: messageParams,
        response: {
          204: { type: "null" },
          404: problemSchema,
          410: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request, reply) => {
      const { roomId, messageId } = request.params;
      await deleteRoomMessage(ctx, request.principal, roomId, messageId);
      return reply.code(204).send();
    },
  );

  for (const present of [true, false]) {
    app.route({
      method: present ? "PUT" : "DELETE",
      url: "/api/rooms/:roomId/messages/:messageId/reactions/:emoji",
      onRequest: anyUser,
      schema: {
        tags,
        security,
        summary: present
          ? "React to a message with an emoji (members; idempotent; fires REACTION_ADDED when the reaction is new)"
          : "Take back your reaction (members; idempotent; fires REACTION_REMOVED when it was there)",
        description:
          "{emoji} is one Unicode emoji, URL-encoded, or a shortcode name such as tada or +1, stored as its emoji; " +
          "anything else answers 400 invalid_emoji. A message has at most 20 different emoji (400 too_many_reactions). " +
          "A deleted message answers 410 message_deleted. A change moves the message's updatedAt.",
        params: ReactionParamsSchema,
        response: {
          204: { type: "null" },
          400: problemSchema,
          404: problemSchema,
          410: problemSchema,
          ...authErrors,
        },
      },
      handler: async (request, reply) => {
        const params = request.params as Static<typeof ReactionParamsSchema>;
        await setReaction(ctx, request.principal, params, present);
        return reply.code(204).send();
      },
    });
  }

  app.get(
    "/api/rooms/:roomId/messages/:messageId/revisions",
    {
      onRequest: anyUser,
      schema: {
        tags,
        security,
        summary:
          "Every version of a message, oldest first, the current one included (admins, bots and its author)",
        params: messageParams,
        response: {
          200: MessageRevisionsSchema,
          400: problemSchema,
          404: problemSchema,
          410: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) =>
      getRevisions(ctx, request.principal, request.params.roomId, request.params.messageId),
  );

  app.get(
    "/api/rooms/:roomId/messages",
    {
      onRequest: anyUser,
      schema: {
        tags,
        security,
        summary:
          "List a room's top-level messages newest first; a thread's replies (threadId) oldest first; or what changed (updatedSince)",
        description:
          "Quarantined and rejected messages only for admins, except that a sender sees their own quarantined " +
          "messages (held for review, moderationStatus QUARANTINED). Deleted messages appear as tombstones " +
          "{id, roomId, threadId, deleted: true, deletedAt, replyCount, lastReplyAt}. updatedSince lists the messages of both levels " +
          "whose updatedAt is later, oldest change first, so a client that was away can refresh what it shows.",
        params: roomParams,
        querystring: ListMessagesParamsSchema,
        response: {
          200: PageOf(MessageListItemSchema),
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) => listPage(ctx, request.principal, request.params.roomId, request.query),
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
        querystring: ListMessagesParamsSchema,
        response: {
          200: PageOf(MessageListItemSchema),
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) =>
      listPage(ctx, request.principal, request.params.roomId, request.query, { asAdmin: true }),
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
          410: problemSchema,
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
