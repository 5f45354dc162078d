import { generateKeyPairSync } from "node:crypto";

/** Standard Webhooks' prefix for an ed25519 public key written as base64 of its 32 bytes. */
export const WHPK_PREFIX = "whpk_";

/** An endpoint's ed25519 key pair as Parley stores it. */
export interface SigningKeyPair {
  /** The private key, PKCS#8 DER in base64: sealed before it is stored, never shown. */
  privateKey: string;
  /** `whpk_` + base64 of the raw 32-byte public key: what receivers verify `v1a` with. */
  publicKey: string;
}

/**
 * A new ed25519 key pair for the `standard-webhooks-ed25519` scheme (node:crypto). The public key
 * is the raw 32 bytes (the JWK's `x`), as the Standard Webhooks libraries and every ed25519
 * library read it; the private key never leaves the server.
 */
export function generateSigningKeyPair(): SigningKeyPair {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const raw = Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url");
  return {
    privateKey: privateKey.export({ format: "der", type: "pkcs8" }).toString("base64"),
    publicKey: `${WHPK_PREFIX}${raw.toString("base64")}`,
  };
}
