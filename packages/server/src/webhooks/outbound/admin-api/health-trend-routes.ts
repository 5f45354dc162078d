import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { HealthTrendSchema, IdParamsSchema } from "@parley/client/wire";
import type { AppContext } from "../../../app-context.js";
import { requireRole } from "../../../auth/require-role.js";
import { authErrors, problemSchema } from "../../../http/schemas.js";
import { healthTrend } from "./health-trend.js";
import { requireEnterprise } from "./require-enterprise.js";

/** An endpoint's success rate over the last 7 days (the admin UI's trend). */
export const webhookHealthTrendRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (
  app,
  { ctx },
) => {
  app.get(
    "/api/admin/webhooks/:id/health",
    {
      onRequest: [requireRole(ctx, "admin"), requireEnterprise(ctx)],
      schema: {
        tags: ["webhooks"],
        security: [{ bearer: [] }],
        summary:
          "The success rate of the endpoint's attempts over the last 7 days: one entry per 24 hours ending now, oldest first",
        params: IdParamsSchema,
        response: { 200: HealthTrendSchema, 400: problemSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request) => healthTrend(ctx, request.params.id),
  );
};
