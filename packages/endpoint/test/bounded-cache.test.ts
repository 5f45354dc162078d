import { describe, expect, it } from "vitest";
import { parseUrlTemplate } from "../src/url-template.js";
import { BoundedCache } from "../src/bounded-cache.js";

describe("BoundedCache", () => {
  it("forgets the oldest entry once full", () => {
    const cache = new BoundedCache<number>(2);
    cache.set("a", 1);
    cache.set("b", 2);
    cache.set("c", 3);
    expect(cache.size).toBe(2);
    expect(cache.get("a")).toBeUndefined();
    expect([cache.get("b"), cache.get("c")]).toEqual([2, 3]);
  });

  it("keeps the template cache bounded when urls are built from unbounded input", () => {
    const first = parseUrlTemplate("/bounded/0");
    for (let i = 1; i <= 1500; i++) parseUrlTemplate(`/bounded/${i}`);
    expect(parseUrlTemplate("/bounded/0")).not.toBe(first);
    expect(parseUrlTemplate("/bounded/1500")).toBe(parseUrlTemplate("/bounded/1500"));
  });
});
