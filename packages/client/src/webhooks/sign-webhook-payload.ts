import { createHmac } from "node:crypto";
import { type RawBody, toBytes } from "./raw-body.js";

/**
 * The `X-Webhook-Signature-256` value Parley sends for `rawBody`: `sha256=` + the lowercase hex
 * HMAC-SHA256 of the bytes, keyed with the secret as UTF-8. For tests of a receiver, and for
 * tools that re-send a delivery.
 */
export function signWebhookPayload(secret: string, rawBody: RawBody): string {
  return `sha256=${createHmac("sha256", Buffer.from(secret, "utf8")).update(toBytes(rawBody)).digest("hex")}`;
}
