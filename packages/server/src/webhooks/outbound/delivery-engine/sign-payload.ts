import { createHmac } from "node:crypto";

/**
 * The value of `X-Webhook-Signature-256`: `sha256=` + lowercase hex HMAC-SHA256 of the exact body
 * bytes, keyed with the endpoint secret as UTF-8 (docs/webhooks.md, "Verifying the signature").
 * Sign the bytes that are sent, never a re-serialisation: a retry re-sends the frozen bytes with
 * the same signature.
 */
export function signPayload(secret: string, body: Uint8Array | string): string {
  const hmac = createHmac("sha256", Buffer.from(secret, "utf8"));
  hmac.update(typeof body === "string" ? Buffer.from(body, "utf8") : body);
  return `sha256=${hmac.digest("hex")}`;
}
