import type { FastifyPluginAsync } from "fastify";
import type { AppContext } from "../app-context.js";
import { requireRole } from "../auth/require-role.js";
import { listQuerySchema } from "../http/pagination.js";
import { authErrors, idParams, listOf, problemSchema, timestamp } from "../http/schemas.js";
import { getFlag, listFlags, reviewFlag, type ReviewStatus } from "./moderation-review.js";

const flagSchema = {
  type: "object",
  properties: {
    id: { type: "integer", description: "the flag's id: flaggedMessageId in moderation events" },
    messageId: { type: "integer" },
    roomId: { type: "integer" },
    category: { type: "string" },
    score: { type: "number" },
    band: { type: "string", enum: ["low", "medium", "high"] },
    status: { type: "string", enum: ["FLAGGED", "QUARANTINED"] },
    reviewStatus: { type: "string", enum: ["pending", "approved", "rejected"] },
    createdAt: timestamp,
    reviewedAt: { type: ["string", "null"], format: "date-time" },
    reviewedBy: { type: ["string", "null"], description: "the reviewing admin's username" },
  },
  required: [
    "id",
    "messageId",
    "roomId",
    "category",
    "score",
    "band",
    "status",
    "reviewStatus",
    "createdAt",
    "reviewedAt",
    "reviewedBy",
  ],
} as const;

/** The moderation review queue: admins list flags and approve or reject the flagged messages. */
export const moderationRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  const admin = requireRole(ctx, "admin");
  const tags = ["moderation"];
  const security = [{ bearer: [] }];

  app.get<{ Querystring: { status?: ReviewStatus; limit: number; cursor?: string } }>(
    "/api/admin/moderation/flags",
    {
      preHandler: admin,
      schema: {
        tags,
        security,
        summary: "List moderation flags, oldest first",
        querystring: {
          type: "object",
          properties: {
            status: { type: "string", enum: ["pending", "approved", "rejected"] },
            ...listQuerySchema,
          },
        },
        response: { 200: listOf(flagSchema), 400: problemSchema, ...authErrors },
      },
    },
    async (request) => listFlags(ctx, request.query),
  );

  app.get<{ Params: { id: number } }>(
    "/api/admin/moderation/flags/:id",
    {
      preHandler: admin,
      schema: {
        tags,
        security,
        summary: "Get one moderation flag (the page a moderation event links to)",
        params: idParams,
        response: { 200: flagSchema, 400: problemSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request) => getFlag(ctx, request.params.id),
  );

  for (const [verb, decision, summary] of [
    [
      "approve",
      "approved",
      "Approve a flagged message: it is shown (a quarantined one fires MESSAGE_CREATED now)",
    ],
    ["reject", "rejected", "Reject a flagged message: it is hidden from everyone but admins"],
  ] as const) {
    app.post<{ Params: { id: number } }>(
      `/api/admin/moderation/flags/:id/${verb}`,
      {
        preHandler: admin,
        schema: {
          tags,
          security,
          summary,
          params: idParams,
          response: {
            200: flagSchema,
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
