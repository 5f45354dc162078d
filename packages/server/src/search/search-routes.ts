import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { PageOf, SearchHitSchema, SearchParamsSchema } from "@parley/client/wire";
import type { AppContext } from "../app-context.js";
import { requireRole } from "../auth/require-role.js";
import { AppError } from "../errors/app-error.js";
import { decodeCursor, encodeCursor, pageLimit } from "../http/pagination.js";
import { authErrors, problemSchema } from "../http/schemas.js";
import { searchMessages } from "./search-service.js";

/** Search the messages of your rooms and DMs. */
export const searchRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (
  app,
  { ctx },
) => {
  app.get(
    "/api/search",
    {
      onRequest: requireRole(ctx),
      schema: {
        tags: ["messages"],
        security: [{ bearer: [] }],
        summary:
          "Search the messages of the rooms and DMs you are a member of (every word of q), newest first",
        description:
          "Admins too find only what they could read as members. Deleted, quarantined and rejected messages " +
          "are never found. Each hit's snippet is HTML: the message's text, escaped, with the matched words " +
          "in <mark>. An empty q, one without a word, longer than 200 characters or with more than 16 " +
          "words answers 400 invalid_query; roomId of a room you are not in, 403 not_a_member (404 when " +
          "there is no such room).",
        querystring: SearchParamsSchema,
        response: {
          200: PageOf(SearchHitSchema),
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) => {
      const query = request.query;
      let before: number | undefined;
      if (query.before !== undefined) {
        before = Date.parse(query.before);
        if (Number.isNaN(before))
          throw new AppError("validation_failed", "before must be an ISO-8601 time", {
            field: "querystring.before",
          });
      }
      const limit = pageLimit(query);
      const slice = await searchMessages(ctx, request.principal, {
        q: query.q,
        roomId: query.roomId,
        from: query.from,
        before,
        cursorId: decodeCursor(query.cursor),
        limit,
      });
      const last = slice.items.at(-1);
      return {
        items: slice.items,
        nextCursor: slice.hasMore && last ? encodeCursor(last.messageId) : null,
      };
    },
  );
};
