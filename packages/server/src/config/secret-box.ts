import crypto from "node:crypto";

/**
 * AES-256-GCM for secrets at rest (webhook signing secrets). Stored form: base64(iv | tag | data).
 * A fresh 96-bit IV per value; the tag authenticates, so a tampered value fails to open.
 */
export function sealSecret(key: Buffer, plaintext: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv("aes-256-gcm", key, iv);
  const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), data]).toString("base64");
}

export function openSecret(key: Buffer, sealed: string): string {
  const raw = Buffer.from(sealed, "base64");
  const decipher = crypto.createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
}
