export * from "./browser.js";

export type { RawBody } from "./webhooks/raw-body.js";
export { parseWebhookEvent } from "./webhooks/parse-webhook-event.js";
export { SIGNATURE_HEADER } from "./webhooks/signature-header.js";
export {
  verifyParleySignature,
  verifyWebhookSignature,
} from "./webhooks/verify-parley-signature.js";
export { signWebhookPayload } from "./webhooks/sign-webhook-payload.js";
export {
  verifySignatureHeaders,
  verifyWebhook,
  DEFAULT_TOLERANCE_SECONDS,
  type VerifySignatureHeadersOptions,
  type VerifyWebhookOptions,
  type WebhookHeaders,
  type WebhookSignatureCheck,
} from "./webhooks/verify-signature-headers.js";
export {
  DEFAULT_SIGNATURE_SCHEMES,
  type WebhookKeys,
  type WebhookSignatureScheme,
} from "./webhooks/webhook-signature-schemes.js";
export {
  verifyAndParseWebhook,
  verifyWebhookRequest,
  type WebhookAccepted,
  type WebhookRejected,
  type WebhookRequestInput,
  type WebhookVerification,
} from "./webhooks/verify-and-parse-webhook.js";
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
