import crypto from "node:crypto";

/** How far a signature's timestamp may be from now, either way (Stripe's own default). */
export const STRIPE_TOLERANCE_SECONDS = 300;

/**
 * Whether `header` (`Stripe-Signature: t=<unix>,v1=<hex>[,v1=...]`) signs `body` with `secret`:
 * some v1 is the hex HMAC-SHA256 of `<t>.<body>` (compared in constant time) and t is within
 * STRIPE_TOLERANCE_SECONDS of `nowMs`. Stripe sends several v1 while an endpoint has two secrets
 * (during a roll); v0 and other schemes are ignored, as Stripe's libraries do. Tested against
 * `stripe.webhooks.generateTestHeaderString`.
 */
export function verifyStripeSignature(
  secret: string,
  body: Buffer,
  header: string | undefined,
  nowMs: number,
): boolean {
  if (!header) return false;
  let timestamp: string | undefined;
  const signatures: Buffer[] = [];
  for (const part of header.split(",")) {
    const [name, value] = part.trim().split("=", 2);
    if (name === "t") timestamp = value;
    else if (name === "v1" && value && /^[0-9a-f]{64}$/i.test(value))
      signatures.push(Buffer.from(value, "hex"));
  }
  if (timestamp === undefined || !/^\d{1,15}$/.test(timestamp) || signatures.length === 0)
    return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > STRIPE_TOLERANCE_SECONDS) return false;
  const expected = crypto
    .createHmac("sha256", secret)
    .update(`${timestamp}.`)
    .update(body)
    .digest();
  return signatures.some((signature) => crypto.timingSafeEqual(signature, expected));
}
