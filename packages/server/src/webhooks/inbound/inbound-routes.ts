import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  CreateInboundWebhookParamsSchema,
  IdParamsSchema,
  InboundWebhookSchema,
  InboundWebhookWithTokenSchema,
  ListInboundWebhooksParamsSchema,
  PageOf,
  UpdateInboundWebhookParamsSchema,
} from "@parley/client/wire";
import type { AppContext } from "../../app-context.js";
import { requireRole } from "../../auth/require-role.js";
import { decodeCursor, pageLimit, toPage } from "../../http/pagination.js";
import { authErrors, problemSchema } from "../../http/schemas.js";
import {
  createInboundWebhook,
  deleteInboundWebhook,
  getInboundWebhook,
  listInboundWebhooks,
  rotateInboundWebhookToken,
  updateInboundWebhook,
} from "./inbound-service.js";

/** Admin management of inbound webhooks (all editions). Unknown body fields answer 400. */
export const inboundWebhooksRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (
  app,
  { ctx },
) => {
  const admin = requireRole(ctx, "admin");
  const tags = ["inbound-webhooks"];
  const security = [{ bearer: [] }];

  app.post(
    "/api/admin/inbound-webhooks",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: "Create an inbound webhook (the answer is the only time its token is shown)",
        body: CreateInboundWebhookParamsSchema,
        response: { 201: InboundWebhookWithTokenSchema, 400: problemSchema, ...authErrors },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createInboundWebhook(ctx, request.principal.userId, request.body)),
  );

  app.get(
    "/api/admin/inbound-webhooks",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: "List inbound webhooks (tokens shown by their last 8 characters only)",
        querystring: ListInboundWebhooksParamsSchema,
        response: { 200: PageOf(InboundWebhookSchema), 400: problemSchema, ...authErrors },
      },
    },
    async (request) =>
      toPage(
        await listInboundWebhooks(ctx, {
          afterId: decodeCursor(request.query.cursor),
          limit: pageLimit(request.query),
          roomId: request.query.roomId,
        }),
      ),
  );

  app.get(
    "/api/admin/inbound-webhooks/:id",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: "Get an inbound webhook",
        params: IdParamsSchema,
        response: {
          200: InboundWebhookSchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) => getInboundWebhook(ctx, request.params.id),
  );

  app.patch(
    "/api/admin/inbound-webhooks/:id",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: "Change an inbound webhook's display name, avatar, enabled or allowOverrides",
        params: IdParamsSchema,
        body: UpdateInboundWebhookParamsSchema,
        response: {
          200: InboundWebhookSchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) => updateInboundWebhook(ctx, request.params.id, request.body ?? {}),
  );

  app.delete(
    "/api/admin/inbound-webhooks/:id",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: "Delete an inbound webhook (its token answers 404 at once; posted messages stay)",
        params: IdParamsSchema,
        response: { 204: { type: "null" }, 400: problemSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request, reply) => {
      await deleteInboundWebhook(ctx, request.params.id);
      return reply.code(204).send();
    },
  );

  app.post(
    "/api/admin/inbound-webhooks/:id/rotate-token",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary:
          "Replace the token (the old one answers 404 at once); the answer shows the new one",
        params: IdParamsSchema,
        response: {
          200: InboundWebhookWithTokenSchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) => rotateInboundWebhookToken(ctx, request.params.id),
  );
};
