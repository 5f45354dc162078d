import type { FastifyPluginAsync } from "fastify";
import type { AppContext } from "../../app-context.js";
import { requireRole } from "../../auth/require-role.js";
import { EVENT_NAMES } from "../../events/event-catalogue.js";
import { listQuerySchema } from "../../http/pagination.js";
import { authErrors, idParams, listOf, problemSchema, timestamp } from "../../http/schemas.js";
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  sendTestEvent,
  updateEndpoint,
  type CreateEndpointInput,
} from "./endpoints-service.js";
import { requireEnterprise } from "./require-enterprise.js";
import type { EndpointInput } from "./validate-endpoint-input.js";

export const webhookSchema = {
  type: "object",
  properties: {
    id: { type: "integer" },
    name: { type: "string" },
    url: { type: "string" },
    events: { type: "array", items: { type: "string", enum: [...EVENT_NAMES] } },
    enabled: { type: "boolean" },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
  required: ["id", "name", "url", "events", "enabled", "createdAt", "updatedAt"],
  additionalProperties: false,
} as const;

// Types only: lengths, URL rules and event names are checked by validateEndpointInput, so each
// failure answers its own code (invalid_name, invalid_url, ...) rather than validation_failed.
const endpointFields = {
  name: { type: "string", description: "1 to 200 characters." },
  url: {
    type: "string",
    description: "Absolute https:// URL; not a loopback, private, link-local or metadata address.",
  },
  secret: {
    type: "string",
    description: "16 to 1024 characters; the HMAC-SHA256 key. Write-only: never returned.",
  },
  events: {
    type: "array",
    items: { type: "string" },
    description: `A non-empty list, without duplicates, of: ${EVENT_NAMES.join(", ")}.`,
  },
  enabled: {
    type: "boolean",
    description: "Default true. A disabled endpoint gets no new deliveries.",
  },
} as const;

/**
 * For actions without fields: a body, if sent, must be empty, so a mistaken field is not ignored.
 * "null" lets a request without any body through (Fastify validates a missing body as null).
 */
export const noBody = {
  type: ["object", "null"],
  additionalProperties: false,
  properties: {},
} as const;

/** Admin management of outbound webhook endpoints (Enterprise edition). */
export const webhookEndpointsRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (
  app,
  { ctx },
) => {
  // onRequest: authentication and the edition gate answer before the body is even parsed.
  const guard = [requireRole(ctx, "admin"), requireEnterprise(ctx)];
  const tags = ["webhooks"];
  const security = [{ bearer: [] }];

  app.post<{ Body: CreateEndpointInput }>(
    "/api/admin/webhooks",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: "Create an outbound webhook endpoint",
        body: {
          type: "object",
          additionalProperties: false,
          required: ["name", "url", "secret", "events"],
          properties: endpointFields,
        },
        response: { 201: webhookSchema, 400: problemSchema, ...authErrors },
      },
    },
    async (request, reply) => reply.code(201).send(await createEndpoint(ctx, request.body)),
  );

  app.get<{ Querystring: { limit: number; cursor?: string } }>(
    "/api/admin/webhooks",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: "List outbound webhook endpoints, oldest first",
        querystring: { type: "object", additionalProperties: false, properties: listQuerySchema },
        response: { 200: listOf(webhookSchema), 400: problemSchema, ...authErrors },
      },
    },
    async (request) => listEndpoints(ctx, request.query),
  );

  app.get<{ Params: { id: number } }>(
    "/api/admin/webhooks/:id",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: "Get an outbound webhook endpoint",
        params: idParams,
        response: { 200: webhookSchema, 400: problemSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request) => getEndpoint(ctx, request.params.id),
  );

  app.patch<{ Params: { id: number }; Body: EndpointInput | undefined }>(
    "/api/admin/webhooks/:id",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: "Change any of name, url, secret, events, enabled",
        params: idParams,
        body: { type: ["object", "null"], additionalProperties: false, properties: endpointFields },
        response: { 200: webhookSchema, 400: problemSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request) => updateEndpoint(ctx, request.params.id, request.body ?? {}),
  );

  app.delete<{ Params: { id: number } }>(
    "/api/admin/webhooks/:id",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: "Delete an endpoint with its delivery log; queued deliveries are dropped",
        params: idParams,
        response: { 204: { type: "null" }, 400: problemSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request, reply) => {
      await deleteEndpoint(ctx, request.params.id);
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { id: number } }>(
    "/api/admin/webhooks/:id/test",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: "Queue a WEBHOOK_TEST delivery to this endpoint (sent even when it is disabled)",
        params: idParams,
        body: noBody,
        response: {
          202: {
            type: "object",
            properties: {
              deliveryId: { type: "integer" },
              status: { type: "string", enum: ["PENDING"] },
            },
            required: ["deliveryId", "status"],
            additionalProperties: false,
          },
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await sendTestEvent(ctx, request.principal, request.params.id)),
  );
};
