import { describe, expect, it } from "vitest";
import { EVENT_ID_PATTERN, eventIdFor, newEventIdPrefix } from "../../../src/events/event-id.js";

describe("event ids", () => {
  it("never hands out the same prefix twice, within one millisecond or across many", () => {
    const seen = new Set<string>();
    const start = Date.now();
    for (let ms = 0; ms < 50; ms++)
      for (let i = 0; i < 100; i++) seen.add(newEventIdPrefix(start + ms));
    expect(seen.size).toBe(5000);
  });

  it("sorts by time as text, and names the endpoint in its last ten digits", () => {
    const early = eventIdFor(newEventIdPrefix(1_795_000_000_000), 7);
    const late = eventIdFor(newEventIdPrefix(1_795_000_000_001), 7);
    expect(early).toMatch(EVENT_ID_PATTERN);
    expect(early < late).toBe(true);
    expect(late.endsWith("0000000007")).toBe(true);
  });

  it("draws fresh randomness for each millisecond (the pool refills past 1,024 draws)", () => {
    const randomParts = new Set<string>();
    for (let ms = 0; ms < 3000; ms++)
      randomParts.add(newEventIdPrefix(2_000_000_000_000 + ms).slice(10));
    // 3,000 draws of 30 bits: a repeat is possible but very unlikely; a stuck pool gives few.
    expect(randomParts.size).toBeGreaterThan(2990);
  });
});
