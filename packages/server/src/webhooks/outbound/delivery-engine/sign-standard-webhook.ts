import { createHmac } from "node:crypto";

/**
 * The Standard Webhooks key of a secret (standardwebhooks.com): a `whsec_<base64>` secret is the
 * base64 of the key bytes, as the public libraries read it; any other secret is its own UTF-8
 * bytes (`new Webhook(secret, {format: "raw"})` on the receiver's side).
 */
export function standardWebhooksKey(secret: string): Buffer {
  return secret.startsWith("whsec_")
    ? Buffer.from(secret.slice("whsec_".length), "base64")
    : Buffer.from(secret, "utf8");
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
