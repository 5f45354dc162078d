import { describe, expect, it, onTestFinished } from "vitest";
import { leaseFor } from "../../../../../src/webhooks/outbound/delivery-engine/dispatcher.js";
import {
  leaseWatchIntervalMs,
  watchLeases,
  type LeaseWatchOptions,
} from "../../../../../src/webhooks/outbound/delivery-engine/lease-watch.js";
import { latch } from "../../../../helpers/latch.js";
import { waitFor } from "../../../../helpers/wait-for.js";

/** A watch on a 40 ms lease (a look-up every 20 ms) with a sweep that never runs. */
function watched(
  nextDueAt: LeaseWatchOptions["nextDueAt"],
  overrides: Partial<LeaseWatchOptions> = {},
) {
  const armed: number[] = [];
  const watch = watchLeases({
    leaseMs: 40,
    sweepIntervalMs: 600_000,
    nextDueAt,
    now: () => Date.now(),
    onDue: (at) => armed.push(at),
    ...overrides,
  });
  onTestFinished(() => watch.stop());
  return { watch, armed };
}

describe("lease watch", () => {
  it("looks every half lease: 32.5 s with the default 30 s time-out", () => {
    expect(leaseWatchIntervalMs(leaseFor(30_000))).toBe(32_500);
    expect(leaseWatchIntervalMs(leaseFor(2_000))).toBe(4_500);
  });

  it("looks up the next due time every half lease and arms the timer with it, claiming nothing", async () => {
    const asked: number[] = [];
    const { watch, armed } = watched(async (now) => {
      asked.push(now);
      return asked.length === 1 ? null : 5_000 + asked.length;
    });
    await waitFor("three look-ups", () => asked.length >= 3);
    await watch.stop();
    const after = asked.length;
    // Nothing to arm after the first look-up; each later answer is handed on.
    expect(armed).toEqual(asked.slice(1).map((_, i) => 5_002 + i));
    // Half a lease apart (timers fire a little late, never early by more than a tick).
    for (let i = 1; i < asked.length; i++)
      expect(asked[i]! - asked[i - 1]!).toBeGreaterThanOrEqual(19);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(asked).toHaveLength(after);
  });

  it("does not run when the sweep looks at least every half lease", async () => {
    let asked = 0;
    watched(
      async () => {
        asked++;
        return 1;
      },
      { sweepIntervalMs: 20 },
    );
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(asked).toBe(0);
  });

  it("waits at stop for a look-up in flight, and arms nothing after it", async () => {
    const answer = latch();
    let asked = 0;
    const { watch, armed } = watched(async () => {
      asked++;
      await answer.opened;
      return 1_000;
    });
    await waitFor("a look-up", () => asked === 1);
    let stopped = false;
    const stopping = watch.stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // One look-up at a time: the ticks meanwhile asked nothing.
    expect(asked).toBe(1);
    expect(stopped).toBe(false);
    answer.release();
    await stopping;
    expect(armed).toEqual([]);
  });

  it("looks again at the next tick after a failed look-up", async () => {
    let asked = 0;
    const { armed } = watched(async () => {
      if (++asked === 1) throw new Error("connection terminated");
      return 7;
    });
    await waitFor("a look-up after the failure", () => armed.length > 0);
    expect(armed[0]).toBe(7);
  });
});
