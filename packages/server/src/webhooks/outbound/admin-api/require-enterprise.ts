import type { FastifyReply, FastifyRequest } from "fastify";
import type { AppContext } from "../../../app-context.js";
import { AppError } from "../../../errors/app-error.js";

/**
 * An `onRequest` hook closing outbound webhooks in the Community edition. It runs after the
 * role check, so a caller without a valid token still gets 401 and learns nothing about editions.
 */
export function requireEnterprise(ctx: AppContext) {
  return async function checkEdition(
    _request: FastifyRequest,
    _reply: FastifyReply,
  ): Promise<void> {
    if (ctx.config.edition !== "enterprise") {
      throw new AppError(
        "enterprise_required",
        "outbound webhooks need the Enterprise edition (PARLEY_EDITION=enterprise)",
      );
    }
  };
}
