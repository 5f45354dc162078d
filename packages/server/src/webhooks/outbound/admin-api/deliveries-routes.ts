import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  DeliveryDetailSchema,
  DeliverySearchItemSchema,
  DeliverySummarySchema,
  EmptyBodySchema,
  IdParams,
  IdParamsSchema,
  ListDeliveriesParamsSchema,
  PageOf,
  RecoveredSchema,
  RecoverParamsSchema,
  RedeliverySchema,
  ReplayMissingParamsSchema,
  SearchDeliveriesParamsSchema,
} from "@parley/client/wire";
import type { AppContext } from "../../../app-context.js";
import { requireRole } from "../../../auth/require-role.js";
import { conditionalGet, notModifiedSchema } from "../../../http/conditional-get.js";
import { decodeCursor, pageLimit, toPage } from "../../../http/pagination.js";
import { authErrors, problemSchema } from "../../../http/schemas.js";
import {
  getEndpointDelivery,
  listEndpointDeliveries,
  recover,
  redeliver,
  replayMissing,
  searchAllDeliveries,
} from "./deliveries-service.js";
import { requireEnterprise } from "./require-enterprise.js";

const deliveryParams = IdParams("id", "deliveryId");

/** The delivery log of an outbound endpoint and redelivery (Enterprise edition). */
export const webhookDeliveriesRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (
  app,
  { ctx },
) => {
  const guard = [requireRole(ctx, "admin"), requireEnterprise(ctx)];
  const tags = ["webhooks"];
  const security = [{ bearer: [] }];

  app.get(
    "/api/admin/webhooks/:id/deliveries",
    {
      onRequest: guard,
      onSend: conditionalGet,
      schema: {
        tags,
        security,
        summary: "List an endpoint's deliveries, newest first (with an ETag, for polling)",
        params: IdParamsSchema,
        querystring: ListDeliveriesParamsSchema,
        response: {
          200: PageOf(DeliverySummarySchema),
          304: notModifiedSchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) =>
      toPage(
        await listEndpointDeliveries(ctx, request.params.id, {
          status: request.query.status,
          event: request.query.event,
          beforeId: decodeCursor(request.query.cursor),
          limit: pageLimit(request.query),
        }),
      ),
  );

  app.get(
    "/api/admin/webhooks/:id/deliveries/:deliveryId",
    {
      onRequest: guard,
      onSend: conditionalGet,
      schema: {
        tags,
        security,
        summary: "Get a delivery with its payload and attempt history (with an ETag, for polling)",
        params: deliveryParams,
        response: {
          200: DeliveryDetailSchema,
          304: notModifiedSchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) => getEndpointDelivery(ctx, request.params.id, request.params.deliveryId),
  );

  app.post(
    "/api/admin/webhooks/:id/deliveries/:deliveryId/redeliver",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: "Queue a new delivery with the same body bytes",
        params: deliveryParams,
        body: EmptyBodySchema,
        response: {
          202: RedeliverySchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await redeliver(ctx, request.params.id, request.params.deliveryId)),
  );

  app.get(
    "/api/admin/deliveries",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: "Search deliveries across endpoints, newest first",
        querystring: SearchDeliveriesParamsSchema,
        response: { 200: PageOf(DeliverySearchItemSchema), 400: problemSchema, ...authErrors },
      },
    },
    async (request) => {
      const { cursor, limit: _limit, ...filters } = request.query;
      return toPage(
        await searchAllDeliveries(ctx, {
          ...filters,
          beforeId: decodeCursor(cursor),
          limit: pageLimit(request.query),
        }),
      );
    },
  );

  app.post(
    "/api/admin/webhooks/:id/recover",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: "Resend, once each, the events of a time range whose delivery failed",
        params: IdParamsSchema,
        body: RecoverParamsSchema,
        response: {
          202: RecoveredSchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await recover(ctx, request.params.id, request.body)),
  );

  app.post(
    "/api/admin/webhooks/:id/replay-missing",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary:
          "Send the events of a time range the endpoint's subscription hears and that never went to it (disabled, filtered out, created later), in event order; dryRun counts them",
        params: IdParamsSchema,
        body: ReplayMissingParamsSchema,
        response: {
          202: RecoveredSchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await replayMissing(ctx, request.params.id, request.body)),
  );
};
