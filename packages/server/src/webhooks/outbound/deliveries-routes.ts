import type { FastifyPluginAsync } from "fastify";
import type { AppContext } from "../../app-context.js";
import { requireRole } from "../../auth/require-role.js";
import { EVENT_NAMES, WEBHOOK_TEST } from "../../events/event-catalogue.js";
import { listQuerySchema } from "../../http/pagination.js";
import { authErrors, idParams, listOf, problemSchema, timestamp } from "../../http/schemas.js";
import {
  getEndpointDelivery,
  listEndpointDeliveries,
  redeliver,
  type DeliveryListQuery,
} from "./deliveries-service.js";
import { noBody } from "./endpoints-routes.js";
import { requireEnterprise } from "./require-enterprise.js";

const DELIVERY_STATUSES = ["PENDING", "SUCCESS", "FAILED", "EXHAUSTED"] as const;
const DELIVERABLE_EVENTS = [...EVENT_NAMES, WEBHOOK_TEST];

const summaryProperties = {
  id: { type: "integer" },
  webhookId: { type: "integer" },
  event: { type: "string", enum: DELIVERABLE_EVENTS },
  status: { type: "string", enum: DELIVERY_STATUSES },
  attempts: { type: "integer" },
  createdAt: timestamp,
  updatedAt: timestamp,
  nextAttemptAt: {
    type: ["string", "null"],
    format: "date-time",
    description: "Null once SUCCESS or EXHAUSTED.",
  },
  lastResponseStatus: { type: ["integer", "null"] },
} as const;
const summaryRequired = Object.keys(summaryProperties);

export const deliverySummarySchema = {
  type: "object",
  properties: summaryProperties,
  required: summaryRequired,
  additionalProperties: false,
} as const;

export const deliveryDetailSchema = {
  type: "object",
  properties: {
    ...summaryProperties,
    payload: {
      type: "object",
      additionalProperties: true,
      description: "The envelope {event, timestamp, webhookId, data} exactly as queued.",
    },
    attemptHistory: {
      type: "array",
      items: {
        type: "object",
        properties: {
          attempt: { type: "integer" },
          startedAt: timestamp,
          durationMs: { type: "integer" },
          responseStatus: { type: ["integer", "null"] },
          responseBody: {
            type: ["string", "null"],
            description: "The first 2048 bytes of the answer.",
          },
          error: { type: ["string", "null"] },
        },
        required: ["attempt", "startedAt", "durationMs", "responseStatus", "responseBody", "error"],
        additionalProperties: false,
      },
    },
  },
  required: [...summaryRequired, "payload", "attemptHistory"],
  additionalProperties: false,
} as const;

const deliveryParams = {
  type: "object",
  properties: { id: { type: "integer", minimum: 1 }, deliveryId: { type: "integer", minimum: 1 } },
  required: ["id", "deliveryId"],
} as const;

/** The delivery log of an outbound endpoint and redelivery (Enterprise edition). */
export const webhookDeliveriesRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (
  app,
  { ctx },
) => {
  const guard = [requireRole(ctx, "admin"), requireEnterprise(ctx)];
  const tags = ["webhooks"];
  const security = [{ bearer: [] }];

  app.get<{ Params: { id: number }; Querystring: DeliveryListQuery }>(
    "/api/admin/webhooks/:id/deliveries",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: "List an endpoint's deliveries, newest first",
        params: idParams,
        querystring: {
          type: "object",
          additionalProperties: false,
          properties: {
            status: { type: "string", enum: DELIVERY_STATUSES },
            event: { type: "string", enum: DELIVERABLE_EVENTS },
            ...listQuerySchema,
          },
        },
        response: {
          200: listOf(deliverySummarySchema),
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) => listEndpointDeliveries(ctx, request.params.id, request.query),
  );

  app.get<{ Params: { id: number; deliveryId: number } }>(
    "/api/admin/webhooks/:id/deliveries/:deliveryId",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: "Get a delivery with its payload and attempt history",
        params: deliveryParams,
        response: {
          200: deliveryDetailSchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) => getEndpointDelivery(ctx, request.params.id, request.params.deliveryId),
  );

  app.post<{ Params: { id: number; deliveryId: number } }>(
    "/api/admin/webhooks/:id/deliveries/:deliveryId/redeliver",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: "Queue a new delivery with the same body bytes",
        params: deliveryParams,
        body: noBody,
        response: {
          202: {
            type: "object",
            properties: { deliveryId: { type: "integer" } },
            required: ["deliveryId"],
            additionalProperties: false,
          },
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await redeliver(ctx, request.params.id, request.params.deliveryId)),
  );
};
