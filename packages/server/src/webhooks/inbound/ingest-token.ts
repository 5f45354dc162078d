import crypto from "node:crypto";

/** 32 random bytes in base64url without padding: always 43 characters of [A-Za-z0-9_-]. */
export const INGEST_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface IngestToken {
  /** Shown once, in the create and rotate answers; never stored. */
  token: string;
  /** Lowercase hex SHA-256 of the token: what the database keeps and looks up by. */
  hash: string;
  last8: string;
}

/**
 * Lowercase hex SHA-256 of a token. A plain hash (no salt, no slow KDF) is right here: the token
 * is 256 random bits, so it cannot be guessed from its hash, and ingest must find it by an index.
 */
export function hashIngestToken(token: string): string {
  // crypto.hash() (Node 20.12+) is the one-shot form: a third of createHash()'s cost per call.
  return crypto.hash("sha256", token, "hex");
}

export function createIngestToken(): IngestToken {
  const token = crypto.randomBytes(32).toString("base64url");
  return { token, hash: hashIngestToken(token), last8: token.slice(-8) };
}
