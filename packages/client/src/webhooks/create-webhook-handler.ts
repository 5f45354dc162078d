import type { IncomingMessage, ServerResponse } from "node:http";
import type { WebhookEvent } from "../types/events.js";
import { BodyTooLargeError, DEFAULT_MAX_BODY_BYTES, readRawBody } from "./read-raw-body.js";
import { problem, sendProblem } from "./send-problem.js";
import { SIGNATURE_HEADER } from "./signature-header.js";
import { verifyAndParseWebhook, type WebhookRejected } from "./verify-and-parse-webhook.js";
import { acceptedSchemes, type WebhookSignatureScheme } from "./webhook-signature-schemes.js";
import { checkWebhookSecrets } from "./webhook-signing-keys.js";

/** What `onEvent` may return to answer something other than 204. */
export interface WebhookReply {
  status: number;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export interface WebhookEventContext {
  req: IncomingMessage;
  /** The exact bytes received (what the signature covers). */
  rawBody: Buffer;
}

export interface WebhookHandlerOptions {
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
   * Called once per verified delivery. Resolve to answer 204 (or return a `WebhookReply`);
   * throw to answer 500, which makes Parley retry the delivery later. Answer quickly: Parley
   * waits at most 30 s; queue slow work and return.
   */
  onEvent(
    event: WebhookEvent,
    context: WebhookEventContext,
  ): void | WebhookReply | Promise<void | WebhookReply>;
  /** Called for each request answered 400 or 401 (after the answer is sent). */
  onRejected?(rejection: WebhookRejected, req: IncomingMessage): void;
  /** Called when `onEvent` throws; the default writes the error to stderr. */
  onError?(error: unknown, req: IncomingMessage): void;
  /** Default 1 MiB; a larger body is answered 413. */
  maxBodyBytes?: number;
}

/**
 * A `(req, res)` listener for `http.createServer()` (or a route of any framework that hands over
 * Node's request and response with the body unread) that receives Parley webhooks: it answers
 * 401 to a missing or wrong signature, 400 to a signed body that is no Parley envelope, 405 to
 * anything but POST, and calls `onEvent` with the typed event otherwise.
 */
export function createWebhookHandler(
  options: WebhookHandlerOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const schemes = acceptedSchemes(options.schemes, options);
  // A secret that gives no key fails here, when the receiver is set up, not at each request.
  checkWebhookSecrets(options, schemes);
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const onError =
    options.onError ??
    ((error: unknown) => console.error("parley webhook handler: onEvent failed:", error));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "POST") {
      req.resume();
      const detail = `webhooks are delivered with POST, not ${req.method}`;
      sendProblem(res, problem(405, "method_not_allowed", "Method not allowed", detail), {
        allow: "POST",
      });
      return;
    }
    let rawBody: Buffer;
    try {
      rawBody = await readRawBody(req, limit);
    } catch (error) {
      if (!(error instanceof BodyTooLargeError)) throw error;
      sendProblem(res, problem(413, "body_too_large", "The body is too large", error.message));
      return;
    }
    const result = verifyAndParseWebhook({
      secret: options.secret,
      publicKey: options.publicKey,
      rawBody,
      signature: req.headers[SIGNATURE_HEADER],
      headers: req.headers,
      schemes,
    });
    if (!result.ok) {
      sendProblem(res, result.problem);
      options.onRejected?.(result, req);
      return;
    }
    let reply: void | WebhookReply;
    try {
      reply = await options.onEvent(result.event, { req, rawBody });
    } catch (error) {
      onError(error, req);
      const detail = "the receiver failed to handle the event";
      sendProblem(res, problem(500, "handler_failed", "Handler failed", detail));
      return;
    }
    if (reply === undefined) {
      res.writeHead(204).end();
    } else {
      res.writeHead(reply.status, reply.headers).end(reply.body);
    }
  }

  return (req, res) => {
    handle(req, res).catch((error: unknown) => {
      onError(error, req);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  };
}
