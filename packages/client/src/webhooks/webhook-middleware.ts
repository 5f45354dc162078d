import type { IncomingMessage, ServerResponse } from "node:http";
import type { WebhookEvent } from "../types/events.js";
import { BodyTooLargeError, DEFAULT_MAX_BODY_BYTES, readRawBody } from "./read-raw-body.js";
import { problem, sendProblem } from "./send-problem.js";
import { SIGNATURE_HEADER } from "./signature-header.js";
import { verifyAndParseWebhook, type WebhookRejected } from "./verify-and-parse-webhook.js";
import { acceptedSchemes, type WebhookSignatureScheme } from "./webhook-signature-schemes.js";
import { checkWebhookSecrets } from "./webhook-signing-keys.js";

declare global {
  // Adds the verified event to Express's request type when Express's types are installed.
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set by @parley/client's `webhookMiddleware()` once the delivery is verified. */
      parleyEvent?: WebhookEvent;
    }
  }
}

/** The request as the middleware sees it: Node's, plus what body parsers may have added. */
export type MiddlewareRequest = IncomingMessage & {
  body?: unknown;
  rawBody?: unknown;
  parleyEvent?: WebhookEvent;
};

export type NextFunction = (error?: unknown) => void;

export interface WebhookMiddlewareOptions {
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
  /** Default 1 MiB; a larger body is answered 413 (when the middleware reads it itself). */
  maxBodyBytes?: number;
  /** Called for each request answered 400 or 401. */
  onRejected?(rejection: WebhookRejected, req: IncomingMessage): void;
}

/**
 * Express (and Connect) middleware that verifies a Parley delivery, sets `req.parleyEvent` to the
 * typed event and calls `next()`; it answers 401 (problem JSON) to a missing or wrong signature
 * and 400 to a signed body that is no Parley envelope.
 *
 * The signature covers the exact bytes, so the middleware needs them: it uses `req.rawBody` when a
 * parser kept it, `req.body` when it is a Buffer (`express.raw({ type: "application/json" })`),
 * and otherwise reads the body itself, which works when no JSON parser ran before it. After
 * `express.json()` without a raw copy the bytes are gone: that is a set-up error, passed to
 * `next(error)`.
 */
export function webhookMiddleware(
  options: WebhookMiddlewareOptions,
): (req: MiddlewareRequest, res: ServerResponse, next: NextFunction) => void {
  const schemes = acceptedSchemes(options.schemes, options);
  // A secret that gives no key fails here, when the app is set up, not at each request.
  checkWebhookSecrets(options, schemes);
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;

  async function handle(req: MiddlewareRequest, res: ServerResponse, next: NextFunction) {
    let rawBody: Buffer | string;
    if (Buffer.isBuffer(req.rawBody) || typeof req.rawBody === "string") {
      rawBody = req.rawBody;
    } else if (Buffer.isBuffer(req.body)) {
      rawBody = req.body;
    } else if (typeof req.body === "string") {
      rawBody = req.body;
    } else if (!req.readableEnded) {
      try {
        rawBody = await readRawBody(req, limit);
      } catch (error) {
        if (!(error instanceof BodyTooLargeError)) throw error;
        sendProblem(res, problem(413, "body_too_large", "The body is too large", error.message));
        return;
      }
    } else {
      next(
        new Error(
          "webhookMiddleware() needs the raw body to check the signature, but a body parser " +
            "already consumed it: mount the middleware before express.json(), or use " +
            'express.raw({ type: "application/json" }) on the webhook route',
        ),
      );
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
    req.rawBody ??= rawBody;
    req.parleyEvent = result.event;
    next();
  }

  return (req, res, next) => {
    handle(req, res, next).catch(next);
  };
}
