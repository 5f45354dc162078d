import type { IncomingMessage } from "node:http";
import type { WebhookEvent } from "../types/events.js";
import { DEFAULT_MAX_BODY_BYTES } from "./read-raw-body.js";
import { SIGNATURE_HEADER } from "./signature-header.js";
import { verifyAndParseWebhook, type WebhookRejected } from "./verify-and-parse-webhook.js";
import { acceptedSchemes, type WebhookSignatureScheme } from "./webhook-signature-schemes.js";
import { checkWebhookSecrets } from "./webhook-signing-keys.js";

/** The parts of a Fastify request the plugin and most handlers use. */
export interface FastifyRequestLike {
  headers: Record<string, string | string[] | undefined>;
  raw: IncomingMessage;
  body: unknown;
  ip: string;
  /** The verified event (set before `onEvent` runs). */
  parleyEvent: WebhookEvent | null;
}

/** The parts of a Fastify reply the plugin and most handlers use. */
export interface FastifyReplyLike {
  code(statusCode: number): FastifyReplyLike;
  header(name: string, value: string): FastifyReplyLike;
  type(contentType: string): FastifyReplyLike;
  send(payload?: unknown): FastifyReplyLike;
  readonly sent: boolean;
}

/** The scope methods the plugin calls; a Fastify instance has them all. */
interface FastifyScope {
  removeAllContentTypeParsers(): void;
  addContentTypeParser(
    contentType: string,
    options: { parseAs: "buffer"; bodyLimit?: number },
    parser: (
      request: unknown,
      body: Buffer,
      done: (error: Error | null, body?: Buffer) => void,
    ) => void,
  ): void;
  decorateRequest(name: string, value: null): void;
  addHook(
    name: "preHandler",
    hook: (request: FastifyRequestLike, reply: FastifyReplyLike) => Promise<unknown>,
  ): void;
  post(
    path: string,
    handler: (request: FastifyRequestLike, reply: FastifyReplyLike) => Promise<unknown>,
  ): void;
}

export interface FastifyWebhooksOptions {
  /** The endpoint's secret, or several while rotating it (HMAC schemes). */
  secret?: string | readonly string[];
  /**
   * The endpoint's public key (`whpk_...`), or several while rotating it: accepts
   * `standard-webhooks-ed25519` (`v1a`) signatures. Give this or `secret`, or both.
   */
  publicKey?: string | readonly string[];
  /**
   * The signature schemes to accept; default both. Pass `["standard-webhooks"]` for an endpoint
   * that signs with Standard Webhooks (`standard-webhooks` or `both`): the `parley` scheme has no
   * timestamp, and accepting it lets a captured delivery be replayed without its `webhook-*`
   * headers.
   */
  schemes?: readonly WebhookSignatureScheme[];
  /**
   * Called once per verified delivery. Answer with `reply` or leave it: an unsent reply is
   * answered 204. Throw to answer 500, which makes Parley retry the delivery later.
   */
  onEvent(event: WebhookEvent, request: FastifyRequestLike, reply: FastifyReplyLike): unknown;
  /** Called for each request answered 400 or 401. */
  onRejected?(rejection: WebhookRejected, request: FastifyRequestLike): void;
  /** The route's path inside the plugin's prefix; default "/". */
  path?: string;
  /** Default 1 MiB; a larger body is answered 413 by Fastify. */
  bodyLimit?: number;
}

/**
 * A Fastify plugin that receives Parley webhooks on `POST <prefix><path>`:
 *
 *   await app.register(fastifyWebhooks, { prefix: "/webhooks/parley", secret, onEvent });
 *
 * In its own encapsulated scope (the rest of the app keeps its JSON parser) it registers a
 * content-type parser that keeps the raw bytes, and a preHandler that answers 401 to a missing or
 * wrong signature and 400 to a signed body that is no Parley envelope, and otherwise sets
 * `request.parleyEvent`.
 */
export async function fastifyWebhooks(instance: object, options: FastifyWebhooksOptions) {
  const schemes = acceptedSchemes(options.schemes, options);
  // A secret that gives no key fails registration, not each request.
  checkWebhookSecrets(options, schemes);
  const app = instance as FastifyScope;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    "*",
    { parseAs: "buffer", bodyLimit: options.bodyLimit ?? DEFAULT_MAX_BODY_BYTES },
    (_request, body, done) => done(null, body),
  );
  app.decorateRequest("parleyEvent", null);

  app.addHook("preHandler", async (request, reply) => {
    const result = verifyAndParseWebhook({
      secret: options.secret,
      publicKey: options.publicKey,
      // A POST without a body reaches here with none: it is verified as zero bytes.
      rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
      signature: request.headers[SIGNATURE_HEADER],
      headers: request.headers,
      schemes,
    });
    if (!result.ok) {
      options.onRejected?.(result, request);
      return reply.code(result.status).type("application/problem+json").send(result.problem);
    }
    request.parleyEvent = result.event;
    return undefined;
  });

  app.post(options.path ?? "/", async (request, reply) => {
    await options.onEvent(request.parleyEvent!, request, reply);
    if (!reply.sent) reply.code(204).send();
    return reply;
  });
}
