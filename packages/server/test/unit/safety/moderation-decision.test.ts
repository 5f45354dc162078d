import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_MODERATION_THRESHOLDS,
  decideModeration,
  validateModerationThresholds,
} from "../../../src/safety/moderation/moderation-decision.js";

describe("decideModeration", () => {
  it("defaults to flag 0.5 and quarantine 0.85", () => {
    expect(DEFAULT_MODERATION_THRESHOLDS).toEqual({ flag: 0.5, quarantine: 0.85 });
  });

  // Default thresholds: FLAGGED range [0.5, 0.85), midpoint 0.675.
  it.each([
    [0, null],
    [0.4999, null],
    [0.5, { band: "low", status: "FLAGGED" }],
    [0.6, { band: "low", status: "FLAGGED" }],
    [0.6749, { band: "low", status: "FLAGGED" }],
    [0.675, { band: "medium", status: "FLAGGED" }],
    [0.8499, { band: "medium", status: "FLAGGED" }],
    [0.85, { band: "high", status: "QUARANTINED" }],
    [1, { band: "high", status: "QUARANTINED" }],
  ])("score %s with default thresholds -> %o", (score, expected) => {
    expect(decideModeration({ category: "harassment", score })).toEqual(expected);
  });

  it.each([
    [0.19, null],
    [0.2, { band: "low", status: "FLAGGED" }],
    [0.3, { band: "medium", status: "FLAGGED" }],
    [0.4, { band: "high", status: "QUARANTINED" }],
  ])("score %s with thresholds 0.2 / 0.4 -> %o", (score, expected) => {
    expect(decideModeration({ category: "spam", score }, { flag: 0.2, quarantine: 0.4 })).toEqual(
      expected,
    );
  });

  it("quarantines from the shared value when flag equals quarantine", () => {
    const thresholds = { flag: 0.7, quarantine: 0.7 };
    expect(decideModeration({ category: "hate", score: 0.69 }, thresholds)).toBeNull();
    expect(decideModeration({ category: "hate", score: 0.7 }, thresholds)).toEqual({
      band: "high",
      status: "QUARANTINED",
    });
  });

  it("ignores category none whatever its score", () => {
    expect(decideModeration({ category: "none", score: 1 })).toBeNull();
  });

  it("rejects a score outside [0, 1]", () => {
    expect(() => decideModeration({ category: "hate", score: 1.2 })).toThrow(RangeError);
    expect(() => decideModeration({ category: "hate", score: Number.NaN })).toThrow(RangeError);
  });

  it.each([
    [{ flag: 0, quarantine: 0.85 }],
    [{ flag: 0.9, quarantine: 0.85 }],
    [{ flag: 0.5, quarantine: 1.01 }],
    [{ flag: Number.NaN, quarantine: 0.85 }],
    [{ flag: -0.1, quarantine: 0.5 }],
  ])("rejects thresholds %o with a message stating the rule", (thresholds) => {
    expect(() => validateModerationThresholds(thresholds)).toThrow(
      /invalid moderation thresholds .*need 0 < flag <= quarantine <= 1/,
    );
    expect(() => decideModeration({ category: "hate", score: 0.5 }, thresholds)).toThrow(
      RangeError,
    );
  });

  it("quarantines exactly when the score reaches the quarantine threshold", () => {
    const unit = fc.double({ min: 0, max: 1, noNaN: true });
    fc.assert(
      fc.property(
        unit,
        unit.filter((t) => t > 0),
        unit.filter((t) => t > 0),
        (score, a, b) => {
          const thresholds = { flag: Math.min(a, b), quarantine: Math.max(a, b) };
          const decision = decideModeration({ category: "violence", score }, thresholds);
          expect(decision?.status === "QUARANTINED").toBe(score >= thresholds.quarantine);
          expect(decision === null).toBe(score < thresholds.flag);
          if (decision?.status === "QUARANTINED") expect(decision.band).toBe("high");
          if (decision?.status === "FLAGGED") expect(decision.band).not.toBe("high");
        },
      ),
      { numRuns: 5000 },
    );
  });
});
