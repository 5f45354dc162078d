import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BUILTIN_DLP_RULES } from "../../../src/safety/dlp/builtin-rules.js";
import { loadDlpPolicy } from "../../../src/safety/dlp/dlp-policy.js";
import { DlpPolicyError } from "../../../src/safety/dlp/dlp-policy-error.js";

const dir = mkdtempSync(join(tmpdir(), "parley-dlp-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fileCount = 0;
function policyFile(content: unknown): string {
  const file = join(dir, `policy-${++fileCount}.json`);
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

function loadError(file: string): DlpPolicyError {
  try {
    loadDlpPolicy(file);
  } catch (error) {
    if (error instanceof DlpPolicyError) return error;
    throw error;
  }
  throw new Error("expected loadDlpPolicy to throw");
}

const codename = {
  id: "project_codename",
  description: "Internal project code names",
  pattern: "\\bPROJECT-(ALPHA|OMEGA)\\b",
  flags: "i",
};

describe("loadDlpPolicy", () => {
  it("uses every built-in rule when there is no policy file", () => {
    expect(loadDlpPolicy().rules).toEqual(BUILTIN_DLP_RULES);
  });

  it("uses every built-in rule for an empty policy object", () => {
    expect(loadDlpPolicy(policyFile({})).rules.map((r) => r.id)).toEqual([
      "payment_card",
      "private_key",
      "cloud_access_key",
    ]);
  });

  it("drops disabled built-in rules and appends custom rules after them", () => {
    const policy = loadDlpPolicy(policyFile({ disable: ["payment_card"], rules: [codename] }));
    expect(policy.rules.map((r) => r.id)).toEqual([
      "private_key",
      "cloud_access_key",
      "project_codename",
    ]);
    const custom = policy.rules[2]!;
    expect(custom.description).toBe("Internal project code names");
    expect(custom.matches("status of project-omega?")).toBe(true);
    expect(custom.matches("PROJECT-BETA")).toBe(false);
  });

  it("keeps custom rules in file order", () => {
    const policy = loadDlpPolicy(
      policyFile({
        rules: [
          { id: "b_rule", description: "B", pattern: "b" },
          { id: "a_rule", description: "A", pattern: "a" },
        ],
      }),
    );
    expect(policy.rules.slice(-2).map((r) => r.id)).toEqual(["b_rule", "a_rule"]);
  });

  it("compiles a custom rule that matches the same text on every call", () => {
    const [rule] = loadDlpPolicy(
      policyFile({
        disable: ["payment_card", "private_key", "cloud_access_key"],
        rules: [codename],
      }),
    ).rules;
    expect([1, 2, 3].map(() => rule!.matches("PROJECT-ALPHA"))).toEqual([true, true, true]);
  });

  it.each([
    ["a file that does not exist", null, /cannot be read/],
    ["bad JSON", "{ disable: [", /not valid JSON/],
    ["a JSON array", [], /must be a JSON object/],
    ["an unknown top-level key", { disabled: ["payment_card"] }, /unknown key\(s\) "disabled"/],
    ["disable not an array", { disable: "payment_card" }, /"disable" must be an array/],
    [
      "an unknown rule in disable",
      { disable: ["credit_card"] },
      /unknown built-in rule "credit_card"/,
    ],
    ["a rule listed twice in disable", { disable: ["private_key", "private_key"] }, /twice/],
    ["rules not an array", { rules: {} }, /"rules" must be an array/],
    ["a rule that is not an object", { rules: ["x"] }, /rules\[0\] must be an object/],
    [
      "an unknown rule key",
      { rules: [{ ...codename, severity: "high" }] },
      /rules\[0\]: unknown key\(s\) "severity"/,
    ],
    [
      "a missing id",
      { rules: [{ description: "d", pattern: "x" }] },
      /rules\[0\]\.id must be a string/,
    ],
    [
      "an id that is not snake_case",
      { rules: [{ ...codename, id: "ProjectCodename" }] },
      /"ProjectCodename" is not snake_case/,
    ],
    [
      "an id with a dash",
      { rules: [{ ...codename, id: "project-codename" }] },
      /is not snake_case/,
    ],
    [
      "duplicate ids",
      { rules: [codename, { ...codename, pattern: "x" }] },
      /rules\[1\]\.id "project_codename" is used by another rule/,
    ],
    [
      "an id clashing with a built-in",
      { rules: [{ ...codename, id: "private_key" }] },
      /"private_key" clashes with a built-in rule/,
    ],
    [
      "an empty description",
      { rules: [{ ...codename, description: " " }] },
      /description must be a non-empty string/,
    ],
    [
      "a missing pattern",
      { rules: [{ id: "x_rule", description: "d" }] },
      /pattern must be a non-empty string/,
    ],
    [
      "an invalid regex",
      { rules: [{ ...codename, pattern: "(unclosed" }] },
      /rules\[0\]\.pattern is not a valid regular expression/,
    ],
    ["the g flag", { rules: [{ ...codename, flags: "gi" }] }, /flags "gi" may only contain/],
    ["the y flag", { rules: [{ ...codename, flags: "y" }] }, /flags "y" may only contain/],
    ["flags not a string", { rules: [{ ...codename, flags: 1 }] }, /flags must be a string/],
    [
      "a repeated flag",
      { rules: [{ ...codename, flags: "ii" }] },
      /not a valid regular expression/,
    ],
  ])("rejects %s with invalid_dlp_policy naming the file", (_name, content, problem) => {
    const file = content === null ? join(dir, "missing.json") : policyFile(content);
    const error = loadError(file);
    expect(error.code).toBe("invalid_dlp_policy");
    expect(error.file).toBe(file);
    expect(error.message).toContain(file);
    expect(error.message).toMatch(problem);
  });

  it("keeps the underlying error as the cause", () => {
    const error = loadError(join(dir, "missing.json"));
    expect((error.cause as NodeJS.ErrnoException).code).toBe("ENOENT");
  });
});
