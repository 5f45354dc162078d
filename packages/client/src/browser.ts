/**
 * `@parley/client/browser`: the parts of the client that run anywhere `fetch` does (browsers,
 * workers, Deno, Node): `request`, `paginate`, the errors and the event names, with every type.
 * Receiving webhooks (signatures, parsing raw bodies, the receivers) uses Node's `crypto`, `http`
 * and `Buffer`, so only the main entry `@parley/client` has it.
 */
export { request } from "./request.js";
export { paginate, type PaginateInterface } from "./paginate.js";
export { VERSION } from "./version.js";
export { inboundWebhookAddresses, type InboundWebhookAddresses } from "./inbound-addresses.js";

export { ParleyError } from "./errors/parley-error.js";
export { RequestError } from "./errors/request-error.js";
export { NetworkError } from "./errors/network-error.js";
export { TimeoutError } from "./errors/timeout-error.js";
export { WebhookPayloadError } from "./errors/webhook-payload-error.js";
export { WebhookSecretError } from "./errors/webhook-secret-error.js";
export { redactRequest, redactUrl } from "./util/redact.js";

export {
  createStreamClient,
  STREAM_PROTOCOL,
  type StreamClient,
  type StreamClientOptions,
  type StreamListeners,
  type StreamState,
} from "./stream/create-stream-client.js";
export type { WebSocketConstructor, WebSocketLike } from "./stream/websocket-like.js";

export { EVENT_NAMES, WEBHOOK_TEST, WEBHOOK_VERIFICATION, isEventName } from "./types/events.js";
export type * from "./types/events.js";
export type * from "./types/api.js";
export type * from "./types/routes.js";
export type * from "./types/request.js";
export type * from "./types/stream.js";
