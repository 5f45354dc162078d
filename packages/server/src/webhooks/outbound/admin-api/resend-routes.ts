import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  EmptyBodySchema,
  EventIdParamsSchema,
  IdParams,
  QueuedRedeliverySchema,
  ResentEventSchema,
} from "@parley/client/wire";
import type { AppContext } from "../../../app-context.js";
import { requireRole } from "../../../auth/require-role.js";
import { authErrors, problemSchema } from "../../../http/schemas.js";
import { requireEnterprise } from "./require-enterprise.js";
import { redeliverById, resendEvent } from "./resend-service.js";

/**
 * Sending again by a delivery's id alone, or by an event's id (Enterprise edition): what
 * `parley webhooks redeliver <deliveryId>` and `parley events resend <eventId>` call.
 */
export const webhookResendRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (
  app,
  { ctx },
) => {
  const guard = [requireRole(ctx, "admin"), requireEnterprise(ctx)];
  const tags = ["webhooks"];
  const security = [{ bearer: [] }];

  app.post(
    "/api/admin/deliveries/:deliveryId/redeliver",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: "Queue a delivery's body again, as a new delivery, by the delivery's id alone",
        params: IdParams("deliveryId"),
        body: EmptyBodySchema,
        response: {
          202: QueuedRedeliverySchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await redeliverById(ctx, request.params.deliveryId)),
  );

  app.post(
    "/api/admin/events/:eventId/resend",
    {
      onRequest: guard,
      schema: {
        tags,
        security,
        summary:
          "Send an event again, by its id (unique per event and endpoint): a redelivery of its first delivery, same bytes",
        params: EventIdParamsSchema,
        body: EmptyBodySchema,
        response: {
          202: ResentEventSchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request, reply) => reply.code(202).send(await resendEvent(ctx, request.params.eventId)),
  );
};
