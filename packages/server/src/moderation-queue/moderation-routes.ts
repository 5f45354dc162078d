import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  FlagContextSchema,
  IdParamsSchema,
  ListFlagsParamsSchema,
  ModerationFlagSchema,
  PageOf,
} from "@parley/client/wire";
import type { AppContext } from "../app-context.js";
import { requireRole } from "../auth/require-role.js";
import { decodeCursor, pageLimit, toPage } from "../http/pagination.js";
import { authErrors, problemSchema } from "../http/schemas.js";
import { flagContext } from "./flag-context.js";
import { getFlag, listFlags, reviewFlag } from "./moderation-review.js";

/** The moderation review queue: admins list flags and approve or reject the flagged messages. */
export const moderationRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (
  app,
  { ctx },
) => {
  const admin = requireRole(ctx, "admin");
  const tags = ["moderation"];
  const security = [{ bearer: [] }];

  app.get(
    "/api/admin/moderation/flags",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: "List moderation flags, oldest first",
        querystring: ListFlagsParamsSchema,
        response: { 200: PageOf(ModerationFlagSchema), 400: problemSchema, ...authErrors },
      },
    },
    async (request) =>
      toPage(
        await listFlags(ctx, {
          status: request.query.status,
          afterId: decodeCursor(request.query.cursor),
          limit: pageLimit(request.query),
        }),
      ),
  );

  app.get(
    "/api/admin/moderation/flags/:id",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: "Get one moderation flag (the page a moderation event links to)",
        params: IdParamsSchema,
        response: {
          200: ModerationFlagSchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) => getFlag(ctx, request.params.id),
  );

  app.get(
    "/api/admin/moderation/flags/:id/context",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary:
          "What to judge a flag by: up to 5 messages before and after it in its conversation (hidden ones included) and its author's 10 most recent other flags",
        params: IdParamsSchema,
        response: {
          200: FlagContextSchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) => flagContext(ctx, request.params.id),
  );

  for (const [verb, decision, summary] of [
    [
      "approve",
      "approved",
      "Approve a flagged message: it is shown (a quarantined one fires MESSAGE_CREATED now)",
    ],
    ["reject", "rejected", "Reject a flagged message: it is hidden from everyone but admins"],
  ] as const) {
    app.post(
      `/api/admin/moderation/flags/:id/${verb}`,
      {
        onRequest: admin,
        schema: {
          tags,
          security,
          summary,
          params: IdParamsSchema,
          response: {
            200: ModerationFlagSchema,
            400: problemSchema,
            404: problemSchema,
            409: problemSchema,
            ...authErrors,
          },
        },
      },
      async (request) => reviewFlag(ctx, request.principal, request.params.id, decision),
    );
  }
};
