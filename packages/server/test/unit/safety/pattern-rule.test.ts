import { describe, expect, it } from "vitest";
import { createPatternRule } from "../../../src/safety/dlp/pattern-rule.js";

describe("createPatternRule", () => {
  it("matches the pattern anywhere in the text, the same way on every call", () => {
    const rule = createPatternRule("ticket_secret", "Ticket secrets", /\bTS-\d{4}\b/);
    expect(rule).toMatchObject({ id: "ticket_secret", description: "Ticket secrets" });
    expect([1, 2, 3].map(() => rule.matches("see TS-1234 now"))).toEqual([true, true, true]);
    expect(rule.matches("TS-12345")).toBe(false);
  });

  it.each([/x/g, /x/y])("refuses the stateful pattern %s", (pattern) => {
    expect(() => createPatternRule("stateful", "d", pattern)).toThrow(
      /must not use the g or y flag/,
    );
  });
});
