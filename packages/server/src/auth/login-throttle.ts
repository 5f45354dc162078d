import crypto from "node:crypto";
import type { AppContext } from "../app-context.js";
import type { RateLimit } from "../config/load-config.js";
import { AppError } from "../errors/app-error.js";
import {
  countLoginAttempts,
  deleteLoginAttempt,
  deleteLoginAttemptsBefore,
  insertLoginAttempts,
} from "./login-attempts-repository.js";

/** An attempt let through the limit: `succeeded()` takes it back, else it counts as a failure. */
export interface LoginAttempt {
  succeeded(): Promise<void>;
}

let lastSweep = 0;

/**
 * The login rate limit: password attempts per username (PARLEY_RATE_LIMIT_LOGIN_USERNAME, 5 a
 * minute) and per address (PARLEY_RATE_LIMIT_LOGIN_ADDRESS, 20 a minute), failed ones counted over
 * a sliding window. It is a log of attempts in the database (not the ingest limit's Redis or
 * in-process windows): every process counts the same attempts without Redis, and a sliding window
 * has no boundary where twice the limit passes. The attempt is written before it is counted, so
 * concurrent guesses each see the others: at most the limit of them pass. A refused attempt is
 * taken back (it tried nothing) and so is a success; a failure stays until the window passes.
 * Unknown usernames are counted like known ones, so the limit tells nothing about which exist.
 */
export async function admitLoginAttempt(
  ctx: AppContext,
  username: string,
  address: string,
): Promise<LoginAttempt> {
  const now = ctx.now();
  const policies: [string, RateLimit][] = [
    [`user:${username.toLowerCase()}`, ctx.config.rateLimitLoginUsername],
    [`addr:${address}`, ctx.config.rateLimitLoginAddress],
  ];
  const attemptId = crypto.randomBytes(12).toString("base64url");
  await insertLoginAttempts(
    ctx.db,
    policies.map(([key]) => key),
    attemptId,
    now,
  );
  for (const [key, policy] of policies) {
    const { count, oldest } = await countLoginAttempts(ctx.db, key, now - policy.windowMs);
    if (count > policy.max) {
      await deleteLoginAttempt(ctx.db, attemptId);
      const retryAfter = Math.max(1, Math.ceil(((oldest ?? now) + policy.windowMs - now) / 1000));
      const what = key.startsWith("user:") ? "for this username" : "from this address";
      throw new AppError(
        "rate_limited",
        `too many failed sign-ins ${what} (at most ${policy.text}); retry in ${retryAfter} s`,
        {},
        { "Retry-After": String(retryAfter) },
      );
    }
  }
  if (now - lastSweep > 60_000) {
    lastSweep = now;
    const longest = Math.max(...policies.map(([, policy]) => policy.windowMs));
    await deleteLoginAttemptsBefore(ctx.db, now - longest);
  }
  return { succeeded: () => deleteLoginAttempt(ctx.db, attemptId) };
}
