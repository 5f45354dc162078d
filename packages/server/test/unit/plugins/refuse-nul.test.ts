import { describe, expect, it } from "vitest";
import { findNul } from "../../../src/plugins/refuse-nul.js";

describe("findNul", () => {
  it("names the first string holding U+0000, at any depth", () => {
    expect(findNul({ name: "ok", events: ["A", "B\u0000"] }, "body")).toBe("body.events.1");
    expect(findNul({ a: { b: { c: "\u0000" } } }, "body")).toBe("body.a.b.c");
    expect(findNul("x\u0000", "body")).toBe("body");
  });

  it("finds it in a field name too", () => {
    expect(findNul({ outer: { "a\u0000": 1 } }, "body")).toBe("body.outer");
  });

  it("finds nothing in clean values of any type", () => {
    for (const value of [undefined, null, 42, true, "text", [], {}, { a: [1, "b", { c: null }] }])
      expect(findNul(value, "body")).toBeUndefined();
    expect(findNul({ escaped: "\\u0000" }, "body")).toBeUndefined();
  });

  it("walks a value nested a hundred thousand levels deep without overflowing the stack", () => {
    const deep = JSON.parse("[".repeat(100_000) + '"\\u0000"' + "]".repeat(100_000)) as unknown;
    expect(findNul(deep, "body")).toMatch(/^body(\.0)+$/);
  });
});
