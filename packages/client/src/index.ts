export { request } from "./request.js";
export { paginate, type PaginateInterface } from "./paginate.js";
export { VERSION } from "./version.js";

export { ParleyError } from "./errors/parley-error.js";
export { RequestError } from "./errors/request-error.js";
export { NetworkError } from "./errors/network-error.js";
export { TimeoutError } from "./errors/timeout-error.js";
export { WebhookPayloadError } from "./errors/webhook-payload-error.js";
export { redactRequest, redactUrl } from "./util/redact.js";

export { SIGNATURE_HEADER } from "./webhooks/signature-header.js";
export type { RawBody } from "./webhooks/raw-body.js";
export { verifyWebhookSignature } from "./webhooks/verify-webhook-signature.js";
export { signWebhookPayload } from "./webhooks/sign-webhook-payload.js";
export { parseWebhookEvent } from "./webhooks/parse-webhook-event.js";
export {
  verifyWebhookRequest,
  type WebhookAccepted,
  type WebhookRejected,
  type WebhookRequestInput,
  type WebhookVerification,
} from "./webhooks/verify-webhook-request.js";
export {
  createWebhookHandler,
  type WebhookEventContext,
  type WebhookHandlerOptions,
  type WebhookReply,
} from "./webhooks/create-webhook-handler.js";
export {
  webhookMiddleware,
  type MiddlewareRequest,
  type NextFunction,
  type WebhookMiddlewareOptions,
} from "./webhooks/webhook-middleware.js";
export {
  fastifyWebhooks,
  type FastifyReplyLike,
  type FastifyRequestLike,
  type FastifyWebhooksOptions,
} from "./webhooks/fastify-webhooks.js";

export { EVENT_NAMES, WEBHOOK_TEST, isEventName } from "./types/events.js";
export type * from "./types/events.js";
export type * from "./types/api.js";
export type * from "./types/routes.js";
export type * from "./types/request.js";
