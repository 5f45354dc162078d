import crypto from "node:crypto";
import type { AppContext } from "../app-context.js";
import { isoTime } from "../events/event-catalogue.js";
import {
  deleteExpiredSessions,
  deleteSession,
  findSessionPrincipal,
  insertSession,
  type SessionPrincipalRow,
} from "./sessions-repository.js";

/** A session lasts 14 days from sign-in; then its user signs in again. */
export const SESSION_TTL_MS = 14 * 24 * 3600 * 1000;

/**
 * Session secrets start with this, so a bearer token is told apart from a JWT (which has dots) at
 * a glance, by people and by the authentication path.
 */
export const SESSION_TOKEN_PREFIX = "pls_";

export interface NewSession {
  /** The secret: the cookie's value and the bearer token of the login answer. Never stored. */
  token: string;
  idHash: string;
  expiresAt: number;
}

/** SHA-256 of a session secret, the session's key in the database. */
export function sessionIdHash(token: string): string {
  return crypto.createHash("sha256").update(token).digest("hex");
}

export function isSessionToken(token: string): boolean {
  return token.startsWith(SESSION_TOKEN_PREFIX);
}

let lastSweep = 0;

/**
 * Starts a session for the user: a fresh random secret every time (so a session id planted in the
 * browser before sign-in is never the one after it), stored only as its hash.
 */
export async function startSession(ctx: AppContext, userId: number): Promise<NewSession> {
  const now = ctx.now();
  const token = SESSION_TOKEN_PREFIX + crypto.randomBytes(32).toString("base64url");
  const idHash = sessionIdHash(token);
  const expiresAt = now + SESSION_TTL_MS;
  await insertSession(ctx.db, {
    idHash,
    userId,
    csrfToken: crypto.randomBytes(24).toString("base64url"),
    now,
    expiresAt,
  });
  // Expired rows are refused when read; drop them now and then so the table stays small.
  if (now - lastSweep > 3600_000) {
    lastSweep = now;
    await deleteExpiredSessions(ctx.db, now);
  }
  return { token, idHash, expiresAt };
}

/** The live session of a secret with its user, or undefined (unknown, ended or expired). */
export async function findLiveSession(
  ctx: AppContext,
  token: string,
): Promise<SessionPrincipalRow | undefined> {
  const row = await findSessionPrincipal(ctx.db, sessionIdHash(token));
  if (!row || Number(row.expires_at) <= ctx.now()) return undefined;
  return row;
}

export async function endSession(ctx: AppContext, idHash: string): Promise<void> {
  await deleteSession(ctx.db, idHash);
}

export function sessionAnswerTimes(session: NewSession): { expiresAt: string } {
  return { expiresAt: isoTime(session.expiresAt) };
}
