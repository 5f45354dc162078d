import { describe, expect, it } from "vitest";
import { transitionAfter } from "../../../../../src/webhooks/outbound/delivery-engine/record-attempts.js";
import { parseRetryAfter } from "../../../../../src/webhooks/outbound/delivery-engine/parse-retry-after.js";
import type { RetryPolicy } from "../../../../../src/webhooks/outbound/delivery-engine/backoff-schedule.js";

const NOW = Date.parse("2026-11-22T10:00:00.000Z");

describe("parseRetryAfter", () => {
  it.each([
    ["0", 0],
    ["1", 1_000],
    ["120", 120_000],
    [" 5 ", 5_000],
  ])("reads delta-seconds %j as %i ms", (value, expected) => {
    expect(parseRetryAfter(value, NOW)).toBe(expected);
  });

  it("reads an IMF-fixdate as the time left until it", () => {
    expect(parseRetryAfter("Sun, 22 Nov 2026 10:00:30 GMT", NOW)).toBe(30_000);
  });

  it("reads the obsolete RFC 850 date form too, as RFC 9110 asks of recipients", () => {
    expect(parseRetryAfter("Sunday, 22-Nov-26 10:01:00 GMT", NOW)).toBe(60_000);
  });

  it("reads the obsolete asctime form as UTC, whatever the process's time zone", () => {
    const zone = process.env.TZ;
    // A zone east of UTC: read as local time, the date would be an hour in the past.
    process.env.TZ = "Europe/Berlin";
    try {
      expect(parseRetryAfter("Sun Nov 22 10:02:00 2026", NOW)).toBe(120_000);
      expect(parseRetryAfter("Sun Nov  6 08:49:37 1994", NOW)).toBe(0);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it("answers 0 for a date already past", () => {
    expect(parseRetryAfter("Sun, 22 Nov 2026 09:59:00 GMT", NOW)).toBe(0);
  });

  it.each([[undefined], [""], ["soon"], ["1e3"]])("answers null for %j", (value) => {
    expect(parseRetryAfter(value, NOW)).toBeNull();
  });
});

describe("transitionAfter with a Retry-After wait", () => {
  const policy: RetryPolicy = { maxAttempts: 5, backoffBaseMs: 100, backoffMaxMs: 5_000 };

  it("waits for the receiver when it asks for longer than the back-off", () => {
    expect(transitionAfter(1, false, policy, NOW, 2_000)).toEqual({
      status: "FAILED",
      nextAttemptAt: NOW + 2_000,
    });
  });

  it("keeps the back-off when the receiver asks for less", () => {
    expect(transitionAfter(3, false, policy, NOW, 0)).toEqual({
      status: "FAILED",
      nextAttemptAt: NOW + 400,
    });
  });

  it("caps the receiver's wait at the back-off ceiling", () => {
    expect(transitionAfter(1, false, policy, NOW, 3_600_000)).toEqual({
      status: "FAILED",
      nextAttemptAt: NOW + 5_000,
    });
  });

  it("still counts the attempt: the last one allowed exhausts the delivery", () => {
    expect(transitionAfter(5, false, policy, NOW, 2_000)).toEqual({
      status: "EXHAUSTED",
      nextAttemptAt: null,
    });
  });
});
