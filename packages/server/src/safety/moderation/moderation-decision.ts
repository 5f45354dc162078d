import type { ModerationResult } from "./moderation-classifier.js";

export type ModerationBand = "low" | "medium" | "high";
export type ModerationStatus = "FLAGGED" | "QUARANTINED";

export interface ModerationThresholds {
  /** Scores from here are flagged for review; the message stays visible. */
  flag: number;
  /** Scores from here are quarantined: hidden until an admin approves them. */
  quarantine: number;
}

export interface ModerationDecision {
  band: ModerationBand;
  status: ModerationStatus;
}

const MIDPOINT_TOLERANCE = 1e-9;

export const DEFAULT_MODERATION_THRESHOLDS: ModerationThresholds = { flag: 0.5, quarantine: 0.85 };

/** Throws a RangeError unless 0 < flag <= quarantine <= 1. */
export function validateModerationThresholds(thresholds: ModerationThresholds): void {
  const { flag, quarantine } = thresholds;
  if (
    !Number.isFinite(flag) ||
    !Number.isFinite(quarantine) ||
    !(0 < flag && flag <= quarantine && quarantine <= 1)
  ) {
    throw new RangeError(
      `invalid moderation thresholds (flag ${flag}, quarantine ${quarantine}): need 0 < flag <= quarantine <= 1`,
    );
  }
}

/**
 * What happens to a message given its classification: nothing (null) below the flag threshold,
 * FLAGGED between the thresholds (band low in the lower half of that range, medium in the upper
 * half), QUARANTINED with band high from the quarantine threshold up.
 */
export function decideModeration(
  result: ModerationResult,
  thresholds: ModerationThresholds = DEFAULT_MODERATION_THRESHOLDS,
): ModerationDecision | null {
  validateModerationThresholds(thresholds);
  const { score } = result;
  if (!Number.isFinite(score) || score < 0 || score > 1) {
    throw new RangeError(`moderation score must be in [0, 1], got ${score}`);
  }
  if (result.category === "none" || score < thresholds.flag) return null;
  if (score >= thresholds.quarantine) return { band: "high", status: "QUARANTINED" };
  // Decimal thresholds are not exact in binary (0.2 + 0.4 !== 0.6), so a score that is the
  // midpoint as written must not fall just below it.
  const midpoint = (thresholds.flag + thresholds.quarantine) / 2 - MIDPOINT_TOLERANCE;
  return { band: score < midpoint ? "low" : "medium", status: "FLAGGED" };
}
