import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { AppError } from "../../../src/errors/app-error.js";
import { ERROR_CATALOGUE } from "../../../src/errors/error-catalogue.js";
import { toProblem } from "../../../src/errors/problem-details.js";

const docs = fs.readFileSync(
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../../docs/errors.md"),
  "utf8",
);

/** Rows of the docs table: | `code` | status | ... */
function documentedCodes(): Map<string, number> {
  const rows = new Map<string, number>();
  for (const match of docs.matchAll(/^\|\s*`([a-z_]+)`\s*\|\s*(\d{3})\s*\|/gm))
    rows.set(match[1]!, Number(match[2]));
  return rows;
}

describe("error catalogue", () => {
  it("uses snake_case codes and HTTP error statuses", () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE)) {
      expect(code).toMatch(/^[a-z]+(_[a-z0-9]+)*$/);
      expect(entry.status).toBeGreaterThanOrEqual(400);
      expect(entry.status).toBeLessThan(600);
    }
  });

  it("matches docs/errors.md code for code and status for status", () => {
    const documented = documentedCodes();
    const catalogue = new Map(
      Object.entries(ERROR_CATALOGUE).map(([code, entry]) => [code, entry.status]),
    );
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(catalogue));
  });

  it("renders an AppError as RFC 9457 problem details with its code and extra fields", () => {
    const problem = toProblem(
      new AppError("dlp_blocked", "matches payment_card", { ruleId: "payment_card" }),
    );
    expect(problem).toEqual({
      type: "https://parley.dev/errors/dlp_blocked",
      title: ERROR_CATALOGUE.dlp_blocked.title,
      status: 422,
      detail: "matches payment_card",
      code: "dlp_blocked",
      ruleId: "payment_card",
    });
  });
});
