import { readFileSync } from "node:fs";
import { BUILTIN_DLP_RULES } from "./builtin-rules.js";
import { DlpPolicyError } from "./dlp-policy-error.js";
import type { DlpRule } from "./dlp-rule.js";
import { createPatternRule } from "./pattern-rule.js";

export interface DlpPolicy {
  rules: readonly DlpRule[];
}

const SNAKE_CASE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;
const POLICY_KEYS = new Set(["disable", "rules"]);
const RULE_KEYS = new Set(["id", "description", "pattern", "flags"]);
// g and y make RegExp#test stateful (lastIndex), so a rule would skip matches on later messages.
const ALLOWED_FLAGS = /^[imsuv]*$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function unknownKeys(value: Record<string, unknown>, known: Set<string>): string[] {
  return Object.keys(value).filter((key) => !known.has(key));
}

function parseDisable(value: unknown, fail: (problem: string) => never): Set<string> {
  if (!Array.isArray(value)) fail('"disable" must be an array of built-in rule ids');
  const builtinIds = new Set(BUILTIN_DLP_RULES.map((rule) => rule.id));
  const disabled = new Set<string>();
  value.forEach((id: unknown, index) => {
    if (typeof id !== "string") fail(`disable[${index}] must be a string`);
    if (!builtinIds.has(id)) {
      fail(
        `disable[${index}]: unknown built-in rule "${id}" (known: ${[...builtinIds].join(", ")})`,
      );
    }
    if (disabled.has(id)) fail(`disable[${index}]: "${id}" is listed twice`);
    disabled.add(id);
  });
  return disabled;
}

function parseRule(
  value: unknown,
  index: number,
  takenIds: Set<string>,
  fail: (problem: string) => never,
): DlpRule {
  const where = `rules[${index}]`;
  if (!isPlainObject(value)) fail(`${where} must be an object`);
  const extra = unknownKeys(value, RULE_KEYS);
  if (extra.length > 0) fail(`${where}: unknown key(s) ${extra.map((k) => `"${k}"`).join(", ")}`);
  const { id, description, pattern, flags = "" } = value;
  if (typeof id !== "string") fail(`${where}.id must be a string`);
  if (!SNAKE_CASE.test(id)) fail(`${where}.id "${id}" is not snake_case`);
  if (BUILTIN_DLP_RULES.some((rule) => rule.id === id)) {
    fail(`${where}.id "${id}" clashes with a built-in rule`);
  }
  if (takenIds.has(id)) fail(`${where}.id "${id}" is used by another rule`);
  if (typeof description !== "string" || description.trim() === "") {
    fail(`${where}.description must be a non-empty string`);
  }
  if (typeof pattern !== "string" || pattern === "") {
    fail(`${where}.pattern must be a non-empty string`);
  }
  if (typeof flags !== "string") fail(`${where}.flags must be a string`);
  if (!ALLOWED_FLAGS.test(flags)) {
    fail(
      `${where}.flags "${flags}" may only contain i, m, s, u, v (g and y make matching stateful)`,
    );
  }
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, flags);
  } catch (error) {
    fail(`${where}.pattern is not a valid regular expression: ${(error as Error).message}`);
  }
  takenIds.add(id);
  return createPatternRule(id, description, regex);
}

function parsePolicy(file: string, source: string): DlpPolicy {
  // Annotated so the compiler treats each call as the end of the path.
  const fail: (problem: string, cause?: unknown) => never = (problem, cause) => {
    throw new DlpPolicyError(file, problem, cause === undefined ? undefined : { cause });
  };
  let document: unknown;
  try {
    document = JSON.parse(source);
  } catch (error) {
    fail(`not valid JSON: ${(error as Error).message}`, error);
  }
  if (!isPlainObject(document)) fail('must be a JSON object with "disable" and/or "rules"');
  const extra = unknownKeys(document, POLICY_KEYS);
  if (extra.length > 0) {
    fail(`unknown key(s) ${extra.map((k) => `"${k}"`).join(", ")} (allowed: "disable", "rules")`);
  }
  const disabled =
    document.disable === undefined ? new Set<string>() : parseDisable(document.disable, fail);
  const rawRules = document.rules ?? [];
  if (!Array.isArray(rawRules)) fail('"rules" must be an array');
  const takenIds = new Set<string>();
  const custom = rawRules.map((rule: unknown, index) => parseRule(rule, index, takenIds, fail));
  return {
    rules: Object.freeze([
      ...BUILTIN_DLP_RULES.filter((rule) => !disabled.has(rule.id)),
      ...custom,
    ]),
  };
}

/**
 * The DLP policy in force: every built-in rule, minus those the policy file disables, followed by
 * the file's own rules in file order. Read once at start-up; any problem in the file is fatal.
 */
export function loadDlpPolicy(policyFile?: string): DlpPolicy {
  if (policyFile === undefined) return { rules: BUILTIN_DLP_RULES };
  let source: string;
  try {
    source = readFileSync(policyFile, "utf8");
  } catch (error) {
    throw new DlpPolicyError(policyFile, `cannot be read: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return parsePolicy(policyFile, source);
}
