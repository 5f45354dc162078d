import { createHmac } from "node:crypto";
import { decodeWhsecSecret, WHSEC_PREFIX } from "../decode-whsec-secret.js";

/** The shortest key Parley signs with, and `@parley/client` verifies with. */
export const SIGNING_KEY_MIN_BYTES = 16;

/**
 * A secret that gives no usable Standard Webhooks key: a `whsec_` secret stored before the API
 * checked them, whose rest is not base64 or encodes fewer than 16 bytes. Nothing is signed with
 * it; the attempt fails with this message until the secret is replaced.
 */
export class SigningKeyError extends Error {
  override name = "SigningKeyError";
}

/**
 * The Standard Webhooks key of a secret (standardwebhooks.com): a `whsec_<base64>` secret is the
 * base64 of the key bytes, as the public libraries read it; any other secret is its own UTF-8
 * bytes (`new Webhook(secret, {format: "raw"})` on the receiver's side). Never an empty or short
 * key: a `whsec_` secret that does not decode to at least 16 bytes throws SigningKeyError (the API
 * refuses those since it checks them; base64url ones generated before stay valid).
 */
export function standardWebhooksKey(secret: string): Buffer {
  if (!secret.startsWith(WHSEC_PREFIX)) return Buffer.from(secret, "utf8");
  const key = decodeWhsecSecret(secret, "base64 or base64url");
  if (key === undefined || key.length < SIGNING_KEY_MIN_BYTES) {
    throw new SigningKeyError(
      key === undefined
        ? `the endpoint's ${WHSEC_PREFIX} secret is not base64, so it gives no Standard Webhooks key: set a new secret (rotate-secret)`
        : `the endpoint's ${WHSEC_PREFIX} secret encodes a ${key.length}-byte key, under ${SIGNING_KEY_MIN_BYTES}: set a new secret (rotate-secret)`,
    );
  }
  return key;
}

/**
 * One `v1,<base64>` entry of `webhook-signature`: HMAC-SHA256 under the key of `secret` over
 * `<webhook-id>.<webhook-timestamp>.<raw body>`.
 */
export function signStandardWebhook(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: Uint8Array,
): string {
  const hmac = createHmac("sha256", standardWebhooksKey(secret));
  hmac.update(`${id}.${timestampSeconds}.`);
  hmac.update(body);
  return `v1,${hmac.digest("base64")}`;
}
