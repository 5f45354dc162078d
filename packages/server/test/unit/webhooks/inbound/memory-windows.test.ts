import { describe, expect, it } from "vitest";
import { MemoryWindows } from "../../../../src/webhooks/inbound/ingest-rate-limit.js";

describe("the in-memory rate-limit windows (no Redis, or Redis down)", () => {
  it("counts per key within a window and starts over when it ends", () => {
    const windows = new MemoryWindows();
    expect(windows.incr("a", 1_000, 0)).toEqual({ current: 1, ttl: 1_000 });
    expect(windows.incr("a", 1_000, 400)).toEqual({ current: 2, ttl: 600 });
    expect(windows.incr("b", 1_000, 400)).toEqual({ current: 1, ttl: 1_000 });
    expect(windows.incr("a", 1_000, 1_000)).toEqual({ current: 1, ttl: 1_000 });
  });

  it("makes room by dropping ended windows first, keeping the live ones", () => {
    const windows = new MemoryWindows(4);
    windows.incr("ended-1", 10, 0);
    windows.incr("ended-2", 10, 0);
    windows.incr("live-1", 1_000, 0);
    windows.incr("live-2", 1_000, 0);
    // Full: the fifth key drops the two ended windows and nothing else.
    expect(windows.incr("new", 1_000, 100).current).toBe(1);
    expect(windows.incr("live-1", 1_000, 100).current).toBe(2);
    expect(windows.incr("live-2", 1_000, 100).current).toBe(2);
    expect(windows.incr("new", 1_000, 100).current).toBe(2);
  });

  it("drops the oldest windows when none has ended, down to nine tenths of the bound", () => {
    const windows = new MemoryWindows(10);
    for (let i = 0; i < 10; i++) windows.incr(`k${i}`, 60_000, 0);
    expect(windows.incr("k10", 60_000, 1).current).toBe(1);
    // k0 went to make room; k1..k9 and k10 keep their counts.
    for (let i = 1; i <= 10; i++) expect(windows.incr(`k${i}`, 60_000, 2).current).toBe(2);
    expect(windows.incr("k0", 60_000, 3).current).toBe(1);
  });

  it("stays bounded under many keys: the newest are kept, the oldest forgotten", () => {
    const windows = new MemoryWindows(100);
    for (let i = 0; i < 1_000; i++) windows.incr(`token-${i}`, 60_000, i);
    expect(windows.incr("token-999", 60_000, 1_000).current).toBe(2);
    expect(windows.incr("token-0", 60_000, 1_000).current).toBe(1);
  });
});
