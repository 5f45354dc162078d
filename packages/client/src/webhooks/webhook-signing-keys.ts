import { WebhookSecretError } from "../errors/webhook-secret-error.js";
import { ed25519PublicKeys } from "./webhook-public-keys.js";
import type { WebhookKeys, WebhookSignatureScheme } from "./webhook-signature-schemes.js";

/** The shortest key a verifier uses: a shorter one can be guessed from a single delivery. */
export const MIN_KEY_BYTES = 16;

const WHSEC_PREFIX = "whsec_";
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]*={0,2}$/;

/** The secrets of a `secret` option, one or a list; throws when there is none. */
export function secretList(secret: string | readonly string[]): readonly string[] {
  const secrets = typeof secret === "string" ? [secret] : secret;
  if (!Array.isArray(secrets) || secrets.length === 0)
    throw new WebhookSecretError("no webhook secret was given: pass the endpoint's secret");
  return secrets;
}

/**
 * The keys of the `parley` scheme (`X-Webhook-Signature-256`): each secret's own UTF-8 bytes.
 * Throws WebhookSecretError for a missing secret or one under 16 bytes.
 */
export function parleyKeys(secret: string | readonly string[]): Buffer[] {
  return secretList(secret).map((one, index, all) => {
    if (typeof one !== "string")
      throw new WebhookSecretError(`${which(index, all)} is not a string`);
    const key = Buffer.from(one, "utf8");
    if (key.length < MIN_KEY_BYTES)
      throw new WebhookSecretError(
        `${which(index, all)} is ${key.length === 0 ? "empty" : `${key.length} bytes`}; a webhook secret has at least ${MIN_KEY_BYTES} (Parley's endpoint secrets have at least 16 characters)`,
      );
    return key;
  });
}

/**
 * The keys of the Standard Webhooks scheme: a `whsec_` secret's base64-decoded bytes, any other
 * secret's UTF-8 bytes. The base64 must be canonical, in the standard alphabet (padded, as Parley
 * generates it and the `standardwebhooks` libraries read it) or the URL-safe one (as `parley
 * webhooks create` generated it before); a lenient decoder would turn `whsec_!!!!` into an empty
 * key that anyone can sign with. Throws WebhookSecretError for such a secret or a key under
 * 16 bytes.
 */
export function standardWebhooksKeys(secret: string | readonly string[]): Buffer[] {
  const raw = parleyKeys(secret);
  return secretList(secret).map((text, index, all) => {
    if (!text.startsWith(WHSEC_PREFIX)) return raw[index]!;
    const key = decodeBase64(text.slice(WHSEC_PREFIX.length));
    if (key === undefined)
      throw new WebhookSecretError(
        `${which(index, all)} starts with ${WHSEC_PREFIX} but the rest is not base64, so it gives no Standard Webhooks key; use the secret Parley shows, or pass schemes: ["parley"] if the endpoint signs with the parley scheme only`,
      );
    if (key.length < MIN_KEY_BYTES)
      throw new WebhookSecretError(
        `${which(index, all)} encodes a ${key.length}-byte key; a Standard Webhooks key has at least ${MIN_KEY_BYTES} bytes`,
      );
    return key;
  });
}

/**
 * Checks up front that every secret gives a usable key for each accepted HMAC scheme, and every
 * public key is one for `standard-webhooks-ed25519` when that is accepted.
 */
export function checkWebhookSecrets(
  keys: WebhookKeys,
  schemes: readonly WebhookSignatureScheme[],
): void {
  if (schemes.includes("standard-webhooks")) standardWebhooksKeys(keys.secret!);
  else if (schemes.includes("parley")) parleyKeys(keys.secret!);
  if (schemes.includes("standard-webhooks-ed25519")) ed25519PublicKeys(keys.publicKey!);
}

function decodeBase64(text: string): Buffer | undefined {
  if (BASE64.test(text) && text.length % 4 === 0) {
    const bytes = Buffer.from(text, "base64");
    if (bytes.toString("base64") === text) return bytes;
  }
  if (BASE64URL.test(text)) {
    const unpadded = text.replace(/=+$/, "");
    const padded = unpadded + "=".repeat((4 - (unpadded.length % 4)) % 4);
    const bytes = Buffer.from(unpadded, "base64url");
    if (bytes.toString("base64url") === unpadded && (text === unpadded || text === padded))
      return bytes;
  }
  return undefined;
}

function which(index: number, all: readonly unknown[]): string {
  return all.length === 1 ? "the webhook secret" : `webhook secret ${index + 1} of ${all.length}`;
}
