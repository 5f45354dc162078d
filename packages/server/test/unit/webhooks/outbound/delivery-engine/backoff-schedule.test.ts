import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_RETRY_POLICY,
  backoffDelay,
  type RetryPolicy,
} from "../../../../../src/webhooks/outbound/delivery-engine/backoff-schedule.js";

describe("backoffDelay", () => {
  it.each([
    [1, 30_000],
    [2, 60_000],
    [3, 120_000],
    [4, 240_000],
    [5, "exhausted"],
    [6, "exhausted"],
  ] as const)(
    "after %i failed attempt(s) with the default policy waits %s",
    (attemptsMade, expected) => {
      expect(backoffDelay(attemptsMade, DEFAULT_RETRY_POLICY)).toBe(expected);
    },
  );

  it("uses the documented defaults: 5 attempts, 30 s base, 3600 s ceiling", () => {
    expect(DEFAULT_RETRY_POLICY).toEqual({
      maxAttempts: 5,
      backoffBaseMs: 30_000,
      backoffMaxMs: 3_600_000,
    });
  });

  it("lets the first attempt go at once", () => {
    expect(backoffDelay(0, DEFAULT_RETRY_POLICY)).toBe(0);
  });

  it("caps the doubling at the ceiling", () => {
    const policy: RetryPolicy = { maxAttempts: 20, backoffBaseMs: 30_000, backoffMaxMs: 3_600_000 };
    expect(backoffDelay(7, policy)).toBe(1_920_000);
    expect(backoffDelay(8, policy)).toBe(3_600_000);
    expect(backoffDelay(19, policy)).toBe(3_600_000);
    expect(backoffDelay(20, policy)).toBe("exhausted");
  });

  it("runs the whole schedule in milliseconds with test-sized knobs", () => {
    const fast: RetryPolicy = { maxAttempts: 3, backoffBaseMs: 10, backoffMaxMs: 15 };
    expect([1, 2, 3].map((n) => backoffDelay(n, fast))).toEqual([10, 15, "exhausted"]);
  });

  it("never decreases and never exceeds the ceiling, for any policy", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 0, max: 100_000_000 }),
        (maxAttempts, backoffBaseMs, backoffMaxMs) => {
          const policy = { maxAttempts, backoffBaseMs, backoffMaxMs };
          let previous = 0;
          for (let made = 1; made < maxAttempts; made++) {
            const delay = backoffDelay(made, policy);
            if (delay === "exhausted") return false;
            expect(Number.isFinite(delay)).toBe(true);
            expect(delay).toBeGreaterThanOrEqual(previous);
            expect(delay).toBeLessThanOrEqual(backoffMaxMs);
            previous = delay;
          }
          return backoffDelay(maxAttempts, policy) === "exhausted";
        },
      ),
    );
  });
});
