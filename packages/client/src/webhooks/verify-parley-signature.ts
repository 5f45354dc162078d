import { createHmac, timingSafeEqual } from "node:crypto";
import { type RawBody, toBytes } from "./raw-body.js";
import { parleyKeys } from "./webhook-signing-keys.js";

const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;

/**
 * Checks the Parley scheme's one header, `X-Webhook-Signature-256`, and nothing else (no
 * timestamp, no Standard Webhooks headers: verifySignatureHeaders checks whichever scheme a
 * request carries). True when `header` is the signature of `rawBody` under `secret` (or under
 * any of `secret`'s values, for a receiver part-way through rotating it). Hash the exact bytes
 * received, never re-serialised JSON. A missing header, one without `sha256=`, of the wrong
 * length or with non-hex characters is simply false. The digests are compared in constant time.
 *
 * The scheme has no timestamp: a captured delivery verifies again whenever it is re-sent, so
 * deduplicate, or use the Standard Webhooks scheme where replays matter.
 *
 * Throws WebhookSecretError, whatever the request, when no secret is given or one is under
 * 16 bytes (a set-up error: such a key is guessed from one delivery).
 */
export function verifyParleySignature(
  secret: string | readonly string[],
  rawBody: RawBody,
  header: string | readonly string[] | null | undefined,
): boolean {
  const keys = parleyKeys(secret);
  // Node joins repeated headers into an array; a delivery carries exactly one.
  if (typeof header !== "string") return false;
  const match = SIGNATURE.exec(header.trim());
  if (match === null) return false;
  const expected = Buffer.from(match[1]!, "hex");
  const bytes = toBytes(rawBody);
  let valid = false;
  for (const key of keys) {
    const actual = createHmac("sha256", key).update(bytes).digest();
    // Every secret is checked, so the time taken does not tell which one matched.
    if (timingSafeEqual(actual, expected)) valid = true;
  }
  return valid;
}

/** @deprecated use verifyParleySignature (the same function, named for the header it checks) */
export const verifyWebhookSignature = verifyParleySignature;
