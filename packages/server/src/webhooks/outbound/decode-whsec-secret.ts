/** Standard Webhooks' prefix for a secret written as the base64 of its key bytes. */
export const WHSEC_PREFIX = "whsec_";

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]*={0,2}$/;

/**
 * The key bytes of a `whsec_` secret, or undefined when the rest is not canonical base64: every
 * character in the alphabet, padded to a multiple of 4 with `=`, and no stray bits in the last
 * character (the one spelling `Buffer#toString("base64")` gives back). Node's own decoder skips
 * characters it does not know and stops at the first `=`, so `whsec_!!!!` and `whsec_=...` would
 * decode to an empty key: never use it on a secret unchecked.
 *
 * `"base64"` is what the API accepts and what the `standardwebhooks` libraries read.
 * `"base64 or base64url"` also takes the URL-safe alphabet, padded or not (canonical too): the
 * spelling `parley webhooks create` and the admin UI generated before they switched to base64, so
 * the delivery engine still signs with secrets stored that way.
 */
export function decodeWhsecSecret(
  secret: string,
  alphabets: "base64" | "base64 or base64url",
): Buffer | undefined {
  if (!secret.startsWith(WHSEC_PREFIX)) return undefined;
  const text = secret.slice(WHSEC_PREFIX.length);
  if (BASE64.test(text) && text.length % 4 === 0) {
    const bytes = Buffer.from(text, "base64");
    if (bytes.toString("base64") === text) return bytes;
  }
  if (alphabets === "base64 or base64url" && BASE64URL.test(text)) {
    const unpadded = text.replace(/=+$/, "");
    const bytes = Buffer.from(unpadded, "base64url");
    const padded = unpadded + "=".repeat((4 - (unpadded.length % 4)) % 4);
    if (bytes.toString("base64url") === unpadded && (text === unpadded || text === padded))
      return bytes;
  }
  return undefined;
}
