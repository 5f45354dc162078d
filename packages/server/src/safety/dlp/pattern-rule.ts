import type { DlpRule } from "./dlp-rule.js";

/**
 * A rule that matches when `pattern` occurs anywhere in the text. Global and sticky patterns
 * keep state in `lastIndex` between calls, so they are refused.
 */
export function createPatternRule(id: string, description: string, pattern: RegExp): DlpRule {
  if (pattern.global || pattern.sticky) {
    throw new TypeError(`DLP rule ${id}: pattern must not use the g or y flag`);
  }
  return { id, description, matches: (text) => pattern.test(text) };
}
