import type { DlpPolicy } from "./dlp-policy.js";
import type { DlpMatch } from "./dlp-rule.js";

/** The first rule of the policy, in policy order, that the text breaks; null when none does. */
export function scanForDlp(policy: DlpPolicy, text: string): DlpMatch | null {
  for (const rule of policy.rules) {
    if (rule.matches(text)) return { ruleId: rule.id, description: rule.description };
  }
  return null;
}
