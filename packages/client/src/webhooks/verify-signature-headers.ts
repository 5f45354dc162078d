import { createHmac, timingSafeEqual, verify } from "node:crypto";
import { type RawBody, toBytes } from "./raw-body.js";
import { SIGNATURE_HEADER } from "./signature-header.js";
import { verifyParleySignature } from "./verify-parley-signature.js";
import { acceptedSchemes, type WebhookSignatureScheme } from "./webhook-signature-schemes.js";
import { ed25519PublicKeys } from "./webhook-public-keys.js";
import { parleyKeys, standardWebhooksKeys } from "./webhook-signing-keys.js";

/** Request headers as Node, Fetch or a plain object give them. */
export type WebhookHeaders =
  Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifySignatureHeadersOptions {
  /** The endpoint's secret, or several while rotating it (any one may match): HMAC schemes. */
  secret?: string | readonly string[] | undefined;
  /**
   * The endpoint's public key (`whpk_...`), or several while rotating it: accepts `v1a` ed25519
   * signatures (`standard-webhooks-ed25519`). Give this or `secret`, or both.
   */
  publicKey?: string | readonly string[] | undefined;
  /** The exact body bytes received. */
  rawBody: RawBody;
  headers: WebhookHeaders;
  /**
   * The schemes this receiver accepts. Default both: Standard Webhooks when its headers are
   * present, otherwise `X-Webhook-Signature-256`. For a `standard-webhooks` or `both` endpoint
   * pass `["standard-webhooks"]`: the `parley` scheme has no timestamp, so accepting it lets a
   * captured `both` delivery, stripped of its `webhook-*` headers, be replayed for ever.
   */
  schemes?: readonly WebhookSignatureScheme[];
  /** How far `webhook-timestamp` may be from now, in seconds. Default 300 (5 minutes). */
  toleranceSeconds?: number;
  /** Default Date.now(). */
  now?: number;
}

export type WebhookSignatureCheck =
  | {
      ok: true;
      scheme: "standard-webhooks" | "standard-webhooks-ed25519";
      eventId: string;
      timestamp: number;
    }
  | { ok: true; scheme: "parley" }
  | { ok: false; reason: string };

export const DEFAULT_TOLERANCE_SECONDS = 300;

/**
 * Verifies the signature headers of a delivery signed by a scheme the receiver accepts
 * (`schemes`, default either), and says which one matched; the body is not parsed
 * (verifyAndParseWebhook does both). With Standard Webhooks headers (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature`) and that scheme accepted, those are checked,
 * timestamp included (a replay outside the tolerance fails); otherwise, when `parley` is
 * accepted, Parley's own `X-Webhook-Signature-256` (verifyParleySignature), which has no
 * timestamp. An endpoint with scheme `both` sends both: the stricter one decides. With
 * `schemes: ["standard-webhooks"]` a request without `webhook-signature` fails, whatever else it
 * carries. Digests are compared in constant time, and every secret is tried. With a `publicKey`
 * (scheme `standard-webhooks-ed25519`), the `v1a,` entries of `webhook-signature` are checked as
 * ed25519 signatures of `<webhook-id>.<webhook-timestamp>.<body>`, under each key given.
 *
 * Never throws for a request. Throws WebhookSecretError when `secret` gives no usable key for an
 * accepted scheme (none, under 16 bytes, or `whsec_` without base64: see standardWebhooksKeys),
 * or `publicKey` is no `whpk_` ed25519 key (ed25519PublicKeys),
 * and ParleyError for an empty or unknown `schemes`.
 */
export function verifySignatureHeaders(
  options: VerifySignatureHeadersOptions,
): WebhookSignatureCheck {
  const schemes = acceptedSchemes(options.schemes, options);
  const standardKeys = schemes.includes("standard-webhooks")
    ? standardWebhooksKeys(options.secret!)
    : undefined;
  const publicKeys = schemes.includes("standard-webhooks-ed25519")
    ? ed25519PublicKeys(options.publicKey!)
    : undefined;
  if (schemes.includes("parley")) parleyKeys(options.secret!);
  const header = (name: string) => headerValue(options.headers, name);
  const signature = header("webhook-signature");
  if ((standardKeys !== undefined || publicKeys !== undefined) && signature !== undefined) {
    const id = header("webhook-id");
    const timestamp = header("webhook-timestamp");
    if (id === undefined || timestamp === undefined)
      return { ok: false, reason: "webhook-id or webhook-timestamp is missing" };
    if (!/^\d{1,12}$/.test(timestamp))
      return { ok: false, reason: "webhook-timestamp is not a number of seconds" };
    const seconds = Number(timestamp);
    const now = (options.now ?? Date.now()) / 1000;
    const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
    if (Math.abs(now - seconds) > tolerance)
      return { ok: false, reason: `webhook-timestamp is more than ${tolerance} s from now` };
    const body = toBytes(options.rawBody);
    const entries = signature.split(" ");
    const given = (version: string) =>
      entries
        .filter((entry) => entry.startsWith(`${version},`))
        .map((entry) => Buffer.from(entry.slice(version.length + 1), "base64"));
    let valid = false;
    for (const key of standardKeys ?? []) {
      const expected = createHmac("sha256", key)
        .update(`${id}.${timestamp}.`)
        .update(body)
        .digest();
      for (const candidate of given("v1"))
        if (candidate.length === expected.length && timingSafeEqual(candidate, expected))
          valid = true;
    }
    if (valid) return { ok: true, scheme: "standard-webhooks", eventId: id, timestamp: seconds };
    if (publicKeys !== undefined) {
      const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, "utf8"), body]);
      // An ed25519 signature is 64 bytes; anything else is not tried.
      const candidates = given("v1a").filter((candidate) => candidate.length === 64);
      for (const key of publicKeys)
        for (const candidate of candidates)
          if (verify(null, signed, key, candidate))
            return {
              ok: true,
              scheme: "standard-webhooks-ed25519",
              eventId: id,
              timestamp: seconds,
            };
    }
    return { ok: false, reason: "webhook-signature does not match the body" };
  }
  if (!schemes.includes("parley"))
    return {
      ok: false,
      reason:
        "webhook-signature is missing, and this receiver accepts only Standard Webhooks signatures",
    };
  const parley = header(SIGNATURE_HEADER);
  if (parley === undefined)
    return {
      ok: false,
      reason:
        standardKeys === undefined
          ? "X-Webhook-Signature-256 is missing, and this receiver accepts only the parley scheme"
          : "neither webhook-signature nor X-Webhook-Signature-256 was sent",
    };
  return verifyParleySignature(options.secret!, options.rawBody, parley)
    ? { ok: true, scheme: "parley" }
    : { ok: false, reason: "X-Webhook-Signature-256 does not match the body" };
}

/** @deprecated use verifySignatureHeaders (the same function, named for what it checks) */
export const verifyWebhook = verifySignatureHeaders;

/** @deprecated use VerifySignatureHeadersOptions */
export type VerifyWebhookOptions = VerifySignatureHeadersOptions;

/** One header of a request, whatever shape its headers come in; undefined when absent or repeated. */
export function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") {
    return (headers as Headers).get(name) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  let value = record[name];
  if (value === undefined) {
    const key = Object.keys(record).find((k) => k.toLowerCase() === name);
    value = key === undefined ? undefined : record[key];
  }
  // Repeated headers: a delivery never sends one twice.
  return typeof value === "string" ? value : undefined;
}
