import { WebhookPayloadError } from "../errors/webhook-payload-error.js";
import type { ProblemDetails } from "../types/api.js";
import type { WebhookEvent } from "../types/events.js";
import { cloudEventEnvelope } from "./cloud-event-envelope.js";
import { parseWebhookEvent } from "./parse-webhook-event.js";
import type { RawBody } from "./raw-body.js";
import { verifyParleySignature } from "./verify-parley-signature.js";
import { verifySignatureHeaders, type WebhookHeaders } from "./verify-signature-headers.js";
import { acceptedSchemes, type WebhookSignatureScheme } from "./webhook-signature-schemes.js";
import { checkWebhookSecrets } from "./webhook-signing-keys.js";

export interface WebhookRequestInput {
  /** The endpoint's secret, or several while rotating it (HMAC schemes). */
  secret?: string | readonly string[] | undefined;
  /**
   * The endpoint's public key (`whpk_...`), or several while rotating it: accepts `v1a` ed25519
   * signatures (`standard-webhooks-ed25519`). Give this or `secret`, or both.
   */
  publicKey?: string | readonly string[] | undefined;
  /** The exact body bytes received. */
  rawBody: RawBody;
  /** The `X-Webhook-Signature-256` header as received (Node may give an array, or nothing). */
  signature: string | readonly string[] | null | undefined;
  /**
   * All the request's headers: when they carry Standard Webhooks' `webhook-signature` (and that
   * scheme is accepted), that scheme is verified instead (timestamp within `toleranceSeconds`,
   * default 300). Needed for `schemes: ["standard-webhooks"]`.
   */
  headers?: WebhookHeaders;
  /**
   * The schemes this receiver accepts; default both (see verifySignatureHeaders). Pass
   * `["standard-webhooks"]` for a `standard-webhooks` or `both` endpoint: the `parley` scheme
   * has no timestamp and cannot be protected against replay.
   */
  schemes?: readonly WebhookSignatureScheme[];
  toleranceSeconds?: number;
}

export interface WebhookAccepted {
  ok: true;
  event: WebhookEvent;
}

export interface WebhookRejected {
  ok: false;
  /** 401 for a missing or wrong signature; 400 for a signed body that is no Parley envelope. */
  status: 400 | 401;
  code: "invalid_signature" | "invalid_payload";
  /** Why, in words: safe to show, it holds neither the secret nor the expected signature. */
  detail: string;
  /** The answer to send: an RFC 9457 body, like Parley's own errors. */
  problem: ProblemDetails;
}

export type WebhookVerification = WebhookAccepted | WebhookRejected;

/**
 * Everything a receiver checks, for any framework: the signature over the raw bytes by a scheme
 * it accepts (401 when it is missing or wrong; verifySignatureHeaders), then the envelope (400;
 * parseWebhookEvent), and the answer to send. The middlewares for Node http, Express and Fastify
 * are this plus reading the body and writing the answer. Throws only for a secret that gives no
 * usable key (WebhookSecretError) or a bad `schemes`, never for a request.
 */
export function verifyAndParseWebhook(input: WebhookRequestInput): WebhookVerification {
  const schemes = acceptedSchemes(input.schemes, input);
  checkWebhookSecrets(input, schemes);
  const standardSchemes = schemes.filter((scheme) => scheme !== "parley");
  const standard =
    input.headers === undefined
      ? undefined
      : typeof (input.headers as Headers).get === "function"
        ? ((input.headers as Headers).get("webhook-signature") ?? undefined)
        : (input.headers as Record<string, unknown>)["webhook-signature"];
  if (standard !== undefined && standardSchemes.length > 0) {
    const check = verifySignatureHeaders({
      secret: input.secret,
      publicKey: input.publicKey,
      rawBody: input.rawBody,
      headers: input.headers!,
      schemes: standardSchemes,
      ...(input.toleranceSeconds === undefined ? {} : { toleranceSeconds: input.toleranceSeconds }),
    });
    if (!check.ok) return reject(401, "invalid_signature", check.reason);
  } else if (!schemes.includes("parley")) {
    // Never a fall-back to the parley header: it has no timestamp, so it would accept a replay.
    return reject(
      401,
      "invalid_signature",
      "the webhook-signature header is missing, and this receiver accepts only Standard Webhooks signatures",
    );
  } else if (!verifyParleySignature(input.secret!, input.rawBody, input.signature)) {
    return reject(401, "invalid_signature", signatureProblem(input.signature));
  }
  try {
    // A CloudEvent (payloadFormat cloudevents or cloudevents-binary) carries the same event.
    const envelope = cloudEventEnvelope(input.rawBody, input.headers) ?? input.rawBody;
    return { ok: true, event: parseWebhookEvent(envelope) };
  } catch (error) {
    if (!(error instanceof WebhookPayloadError)) throw error;
    return reject(
      400,
      "invalid_payload",
      `the body is not a Parley webhook envelope: ${error.message}`,
    );
  }
}

/** @deprecated use verifyAndParseWebhook (the same function, named for what it does) */
export const verifyWebhookRequest = verifyAndParseWebhook;

function signatureProblem(signature: WebhookRequestInput["signature"]): string {
  if (signature === undefined || signature === null || signature === "") {
    return "the X-Webhook-Signature-256 header is missing";
  }
  if (typeof signature !== "string") return "more than one X-Webhook-Signature-256 header was sent";
  if (!/^sha256=[0-9a-fA-F]{64}$/.test(signature.trim())) {
    return "the X-Webhook-Signature-256 header is not of the form sha256=<64 hex digits>";
  }
  return "the X-Webhook-Signature-256 header does not match the body";
}

function reject(status: 400 | 401, code: WebhookRejected["code"], detail: string): WebhookRejected {
  const title =
    status === 401 ? "The webhook signature is missing or wrong" : "The body is no webhook event";
  return {
    ok: false,
    status,
    code,
    detail,
    problem: { type: `https://parley.dev/errors/${code}`, title, status, detail, code },
  };
}
