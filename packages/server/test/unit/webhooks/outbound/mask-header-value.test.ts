import { describe, expect, it } from "vitest";
import { maskHeaderValue } from "../../../../src/webhooks/outbound/mask-header-value.js";

describe("maskHeaderValue", () => {
  it.each([
    ["", "****"],
    ["abcd", "****"],
    ["abcde", "****e"],
    ["abcdef", "****ef"],
    ["abcdefghi", "****ghi"],
    ["abcdefghijk", "****ijk"],
    ["abcdefghijkl", "****ijkl"],
    ["Bearer sk_live_abcdef1234", "****1234"],
  ])("masks %j as %j", (value, masked) => {
    expect(maskHeaderValue(value)).toBe(masked);
  });

  it("shows at most the last 4 characters and never more than a third of a value", () => {
    for (let length = 0; length <= 40; length++) {
      const value = "x".repeat(length);
      const shown = maskHeaderValue(value).length - "****".length;
      expect(shown, `a value of ${length}`).toBeLessThanOrEqual(Math.min(4, length / 3));
    }
  });
});
