import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { formatPayload } from "../delivery-engine/format-payload.js";
import {
  CreateWebhookParamsSchema,
  EmptyBodySchema,
  EventTypesSchema,
  IdParamsSchema,
  ListWebhooksParamsSchema,
  PageOf,
  QueuedDeliverySchema,
  RotatedSecretSchema,
  RotateSecretParamsSchema,
  TestWebhookParamsSchema,
  UpdateWebhookParamsSchema,
  WebhookSchema,
} from "@parley/client/wire";
import type { AppContext } from "../../../app-context.js";
import { requireRole } from "../../../auth/require-role.js";
import { EVENT_TYPES } from "../../../events/event-catalogue.js";
import { decodeCursor, pageLimit, toPage } from "../../../http/pagination.js";
import { authErrors, problemSchema } from "../../../http/schemas.js";
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  rotateSecret,
  sendTestEvent,
  updateEndpoint,
  verifyEndpoint,
} from "./endpoints-service.js";
import { requireEnterprise } from "./require-enterprise.js";

// The body schemas check types only: lengths, URL rules and event names are checked by
// validateEndpointInput, so each failure answers its own code (invalid_name, invalid_url, ...)
// rather than validation_failed. Unknown fields are refused by the schema (unknown_field).

/** Admin management of outbound webhook endpoints (Enterprise edition). */
export const webhookEndpointsRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (
  app,
  { ctx },
) => {
  // onRequest: authentication and the edition gate answer before the body is even parsed.
  const guard = [requireRole(ctx, "admin"), requireEnterprise(ctx)];
  const tags = ["webhooks"];
  const security = [{ bearer: [] }];

  app.post(
    "/api/admin/webhooks",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: "Create an outbound webhook endpoint",
        body: CreateWebhookParamsSchema,
        response: { 201: WebhookSchema, 400: problemSchema, ...authErrors },
      },
    },
    async (request, reply) => reply.code(201).send(await createEndpoint(ctx, request.body)),
  );

  app.get(
    "/api/admin/webhooks",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: "List outbound webhook endpoints, oldest first",
        querystring: ListWebhooksParamsSchema,
        response: { 200: PageOf(WebhookSchema), 400: problemSchema, ...authErrors },
      },
    },
    async (request) =>
      toPage(
        await listEndpoints(ctx, {
          afterId: decodeCursor(request.query.cursor),
          limit: pageLimit(request.query),
        }),
      ),
  );

  app.get(
    "/api/admin/webhooks/event-types",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: "The event catalogue: every event with a description and a sample payload",
        response: { 200: EventTypesSchema, ...authErrors },
      },
    },
    async () => ({
      items: Object.entries(EVENT_TYPES).map(([name, { description, sample }]) => {
        const envelope = JSON.stringify({
          event: name,
          timestamp: "2026-11-22T10:00:00.000Z",
          webhookId: 4,
          data: sample,
        });
        const sampleEventId = "evt_2VfGdcHe0Ca2sFS9jN6M4y0000000004";
        const binary = formatPayload("cloudevents-binary", envelope, sampleEventId);
        return {
          name: name as keyof typeof EVENT_TYPES,
          description,
          sample: JSON.parse(envelope) as never,
          samples: {
            cloudevents: JSON.parse(
              formatPayload("cloudevents", envelope, sampleEventId).body.toString("utf8"),
            ) as Record<string, unknown>,
            cloudeventsBinary: {
              headers: { "content-type": binary.contentType, ...binary.headers },
              body: JSON.parse(binary.body.toString("utf8")) as unknown,
            },
          },
        };
      }),
    }),
  );

  app.get(
    "/api/admin/webhooks/:id",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: "Get an outbound webhook endpoint",
        params: IdParamsSchema,
        response: { 200: WebhookSchema, 400: problemSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request) => getEndpoint(ctx, request.params.id),
  );

  app.patch(
    "/api/admin/webhooks/:id",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: "Change any of name, url, secret, events, enabled",
        params: IdParamsSchema,
        body: UpdateWebhookParamsSchema,
        response: { 200: WebhookSchema, 400: problemSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request) => updateEndpoint(ctx, request.params.id, request.body ?? {}),
  );

  app.delete(
    "/api/admin/webhooks/:id",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: "Delete an endpoint with its delivery log; queued deliveries are dropped",
        params: IdParamsSchema,
        response: { 204: { type: "null" }, 400: problemSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request, reply) => {
      await deleteEndpoint(ctx, request.params.id);
      return reply.code(204).send();
    },
  );

  app.post(
    "/api/admin/webhooks/:id/test",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary:
          "Queue a test delivery to this endpoint alone: WEBHOOK_TEST (sent even when it is disabled), or any event of the catalogue with its sample data",
        params: IdParamsSchema,
        body: TestWebhookParamsSchema,
        response: {
          202: QueuedDeliverySchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(await sendTestEvent(ctx, request.principal, request.params.id, request.body?.event)),
  );

  app.post(
    "/api/admin/webhooks/:id/verify",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary:
          "Send the ownership check's WEBHOOK_VERIFICATION challenge again; the endpoint is verified once its receiver answers 2xx with the challenge",
        params: IdParamsSchema,
        body: EmptyBodySchema,
        response: {
          202: QueuedDeliverySchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request, reply) => reply.code(202).send(await verifyEndpoint(ctx, request.params.id)),
  );

  app.post(
    "/api/admin/webhooks/:id/rotate-secret",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: "Replace the secret, keeping the old one valid for an overlap window",
        params: IdParamsSchema,
        body: RotateSecretParamsSchema,
        response: {
          200: RotatedSecretSchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request) => rotateSecret(ctx, request.params.id, request.body ?? {}),
  );
};
