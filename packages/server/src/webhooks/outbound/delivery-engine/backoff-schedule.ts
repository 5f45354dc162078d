/**
 * The back-off schedule: how long a failed delivery waits before its next attempt, and when it
 * has none left. (A receiver's own Retry-After is read by parse-retry-after.ts; record-attempts.ts
 * weighs the two.)
 */
export interface RetryPolicy {
  /** Total attempts, the first included, before a delivery is EXHAUSTED. */
  maxAttempts: number;
  /** Delay before the second attempt; each later delay doubles. */
  backoffBaseMs: number;
  /** Ceiling on any single delay. */
  backoffMaxMs: number;
}

/**
 * The default receivers are told of (docs/webhooks.md, "Delivery, failures and retries"): 5
 * attempts; 30 s, 60 s, 120 s, 240 s between them; ceiling 3600 s.
 */
export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 5,
  backoffBaseMs: 30_000,
  backoffMaxMs: 3_600_000,
});

/**
 * After `attemptsMade` failed attempts, how long to wait before the next one, or "exhausted" when
 * no attempt is left. The delay before attempt n (n >= 2) is min(base * 2^(n-2), max).
 */
export function backoffDelay(attemptsMade: number, policy: RetryPolicy): number | "exhausted" {
  if (attemptsMade >= policy.maxAttempts) return "exhausted";
  // Before any attempt there is nothing to wait for: the first attempt is due at once.
  if (attemptsMade < 1) return 0;
  // 2 ** 1024 is Infinity, which Math.min clamps to the ceiling, so huge policies stay finite.
  return Math.min(policy.backoffBaseMs * 2 ** (attemptsMade - 1), policy.backoffMaxMs);
}
