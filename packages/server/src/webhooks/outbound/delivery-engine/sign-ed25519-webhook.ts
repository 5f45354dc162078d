import { createPrivateKey, sign, type KeyObject } from "node:crypto";

/** The private key of a stored key pair (PKCS#8 DER in base64, as generateSigningKeyPair keeps it). */
export function signingKeyFrom(privateKey: string): KeyObject {
  return createPrivateKey({ key: Buffer.from(privateKey, "base64"), format: "der", type: "pkcs8" });
}

/**
 * One `v1a,<base64>` entry of `webhook-signature`: Standard Webhooks' asymmetric form, the
 * ed25519 signature of `<webhook-id>.<webhook-timestamp>.<raw body>` (the body as sent, whatever
 * its format).
 */
export function signEd25519Webhook(
  key: KeyObject,
  id: string,
  timestampSeconds: number,
  body: Uint8Array,
): string {
  const signed = Buffer.concat([Buffer.from(`${id}.${timestampSeconds}.`, "utf8"), body]);
  return `v1a,${sign(null, signed, key).toString("base64")}`;
}
