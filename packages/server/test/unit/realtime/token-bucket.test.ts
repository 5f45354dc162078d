import { describe, expect, it } from "vitest";
import { TokenBucket } from "../../../src/realtime/token-bucket.js";

describe("TokenBucket", () => {
  it("gives the burst at once, then the rate, and never holds more than the burst", () => {
    let now = 0;
    const bucket = new TokenBucket(10, 5, () => now);
    expect(Array.from({ length: 6 }, () => bucket.take())).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
    ]);
    now += 100; // one token at 10 per second
    expect([bucket.take(), bucket.take()]).toEqual([true, false]);
    now += 60_000; // a minute idle refills the burst, not 600 tokens
    expect(Array.from({ length: 6 }, () => bucket.take()).filter(Boolean)).toHaveLength(5);
  });
});
