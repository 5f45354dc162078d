import { createPublicKey, type KeyObject } from "node:crypto";
import { WebhookSecretError } from "../errors/webhook-secret-error.js";

/** Standard Webhooks' prefix for an ed25519 public key: `whpk_` + base64 of its 32 bytes. */
export const WHPK_PREFIX = "whpk_";

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The public keys of a `publicKey` option, one or a list; throws when there is none. */
export function publicKeyList(publicKey: string | readonly string[]): readonly string[] {
  const keys = typeof publicKey === "string" ? [publicKey] : publicKey;
  if (!Array.isArray(keys) || keys.length === 0)
    throw new WebhookSecretError(
      "no public key was given: pass the endpoint's publicKey (whpk_...)",
    );
  return keys;
}

/**
 * The ed25519 keys of the `standard-webhooks-ed25519` scheme (`v1a` signatures): each a `whpk_`
 * key as Parley shows it, `whpk_` + canonical base64 of the 32 raw bytes. Throws
 * WebhookSecretError for anything else (a key is never guessed at).
 */
export function ed25519PublicKeys(publicKey: string | readonly string[]): KeyObject[] {
  return publicKeyList(publicKey).map((text, index, all) => {
    const which = all.length === 1 ? "the public key" : `public key ${index + 1} of ${all.length}`;
    const rest = typeof text === "string" && text.startsWith(WHPK_PREFIX) ? text.slice(5) : "";
    const raw = BASE64.test(rest) && rest.length % 4 === 0 ? Buffer.from(rest, "base64") : null;
    if (raw === null || raw.length !== 32 || raw.toString("base64") !== rest)
      throw new WebhookSecretError(
        `${which} is not ${WHPK_PREFIX} + base64 of a 32-byte ed25519 key; use the publicKey Parley shows for the endpoint`,
      );
    return createPublicKey({
      key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") },
      format: "jwk",
    });
  });
}
