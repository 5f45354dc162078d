import { describe, expect, it } from "vitest";
import { loadDlpPolicy } from "../../../src/safety/dlp/dlp-policy.js";
import type { DlpRule } from "../../../src/safety/dlp/dlp-rule.js";
import { scanForDlp } from "../../../src/safety/dlp/scan-for-dlp.js";

const rule = (id: string, word: string): DlpRule => ({
  id,
  description: `mentions ${word}`,
  matches: (text) => text.includes(word),
});

describe("scanForDlp", () => {
  it("returns null when no rule matches", () => {
    expect(scanForDlp(loadDlpPolicy(), "Deploy finished in 42 s, see ticket 1234.")).toBeNull();
  });

  it("names the rule that matched, without the matched text", () => {
    expect(scanForDlp(loadDlpPolicy(), "my card is 4111 1111 1111 1111")).toEqual({
      ruleId: "payment_card",
      description: "Payment card number (13-19 digits passing the Luhn check)",
    });
  });

  it("reports the first matching rule in policy order", () => {
    const policy = { rules: [rule("first", "apple"), rule("second", "pear")] };
    expect(scanForDlp(policy, "pear and apple")?.ruleId).toBe("first");
    expect(scanForDlp(policy, "just a pear")?.ruleId).toBe("second");
  });

  it("finds nothing with an empty policy", () => {
    expect(scanForDlp({ rules: [] }, "AKIA" + "IOSFODNN7EXAMPLE")).toBeNull();
  });
});
