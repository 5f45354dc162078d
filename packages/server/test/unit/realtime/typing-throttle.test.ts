import { describe, expect, it } from "vitest";
import { TypingThrottle } from "../../../src/realtime/typing-throttle.js";

describe("TypingThrottle", () => {
  it("lets one notice per key through per interval and the next once the interval has passed", () => {
    const throttle = new TypingThrottle(2_000);
    expect(throttle.allow("1:ann", 10_000)).toBe(true);
    expect(throttle.allow("1:ann", 10_001)).toBe(false);
    expect(throttle.allow("1:ann", 11_999)).toBe(false);
    expect(throttle.allow("2:ann", 11_999)).toBe(true);
    expect(throttle.allow("1:bob", 11_999)).toBe(true);
    expect(throttle.allow("1:ann", 12_000)).toBe(true);
    expect(throttle.allow("1:ann", 13_000)).toBe(false);
  });

  it("forgets old keys as it grows, without letting a recent one through early", () => {
    const throttle = new TypingThrottle(2_000);
    for (let i = 0; i < 10_001; i++) throttle.allow(`old:${i}`, 0);
    expect(throttle.allow("recent", 5_000)).toBe(true);
    // The sweep ran (more than 10,000 keys) and kept the recent key.
    for (let i = 0; i < 10_001; i++) throttle.allow(`new:${i}`, 5_001);
    expect(throttle.allow("recent", 5_002)).toBe(false);
    expect(throttle.allow("old:1", 5_002)).toBe(true);
  });
});
