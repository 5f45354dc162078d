import type { FastifyPluginAsync } from "fastify";
import type { AppContext } from "../../app-context.js";
import { requireRole } from "../../auth/require-role.js";
import { listQuerySchema } from "../../http/pagination.js";
import { authErrors, idParams, listOf, problemSchema } from "../../http/schemas.js";
import {
  createInboundWebhookBody,
  inboundWebhookSchema,
  inboundWebhookWithTokenSchema,
  updateInboundWebhookBody,
} from "./inbound-schemas.js";
import {
  createInboundWebhook,
  deleteInboundWebhook,
  getInboundWebhook,
  listInboundWebhooks,
  rotateInboundWebhookToken,
  updateInboundWebhook,
  type CreateInboundWebhookInput,
  type UpdateInboundWebhookInput,
} from "./inbound-service.js";

/** Admin management of inbound webhooks (all editions). Unknown body fields answer 400. */
export const inboundWebhooksRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (
  app,
  { ctx },
) => {
  const admin = requireRole(ctx, "admin");
  const tags = ["inbound-webhooks"];
  const security = [{ bearer: [] }];

  app.post<{ Body: CreateInboundWebhookInput }>(
    "/api/admin/inbound-webhooks",
    {
      preHandler: admin,
      schema: {
        tags,
        security,
        summary: "Create an inbound webhook (the answer is the only time its token is shown)",
        body: createInboundWebhookBody,
        response: { 201: inboundWebhookWithTokenSchema, 400: problemSchema, ...authErrors },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createInboundWebhook(ctx, request.principal.userId, request.body)),
  );

  app.get<{ Querystring: { limit: number; cursor?: string; roomId?: number } }>(
    "/api/admin/inbound-webhooks",
    {
      preHandler: admin,
      schema: {
        tags,
        security,
        summary: "List inbound webhooks (tokens shown by their last 8 characters only)",
        querystring: {
          type: "object",
          additionalProperties: false,
          properties: { ...listQuerySchema, roomId: { type: "integer", minimum: 1 } },
        },
        response: { 200: listOf(inboundWebhookSchema), 400: problemSchema, ...authErrors },
      },
    },
    async (request) => listInboundWebhooks(ctx, request.query),
  );

  app.get<{ Params: { id: number } }>(
    "/api/admin/inbound-webhooks/:id",
    {
      preHandler: admin,
      schema: {
        tags,
        security,
        summary: "Get an inbound webhook",
        params: idParams,
        response: {
          200: inboundWebhookSchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) => getInboundWebhook(ctx, request.params.id),
  );

  app.patch<{ Params: { id: number }; Body: UpdateInboundWebhookInput }>(
    "/api/admin/inbound-webhooks/:id",
    {
      preHandler: admin,
      schema: {
        tags,
        security,
        summary: "Change an inbound webhook's display name, avatar, enabled or allowOverrides",
        params: idParams,
        body: updateInboundWebhookBody,
        response: {
          200: inboundWebhookSchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) => updateInboundWebhook(ctx, request.params.id, request.body ?? {}),
  );

  app.delete<{ Params: { id: number } }>(
    "/api/admin/inbound-webhooks/:id",
    {
      preHandler: admin,
      schema: {
        tags,
        security,
        summary: "Delete an inbound webhook (its token answers 404 at once; posted messages stay)",
        params: idParams,
        response: { 204: { type: "null" }, 400: problemSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request, reply) => {
      await deleteInboundWebhook(ctx, request.params.id);
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { id: number } }>(
    "/api/admin/inbound-webhooks/:id/rotate-token",
    {
      preHandler: admin,
      schema: {
        tags,
        security,
        summary:
          "Replace the token (the old one answers 404 at once); the answer shows the new one",
        params: idParams,
        response: {
          200: inboundWebhookWithTokenSchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) => rotateInboundWebhookToken(ctx, request.params.id),
  );
};
