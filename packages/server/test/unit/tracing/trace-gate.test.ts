import { describe, expect, it } from "vitest";
import { TRACE_GATE_REFRESH_MS, TraceGate } from "../../../src/tracing/trace-gate.js";

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("TraceGate", () => {
  it("always carries traces while OpenTelemetry exports, without asking the database", () => {
    let asked = 0;
    const gate = new TraceGate(async () => (asked++, false), true);
    expect(gate.carry()).toBe(true);
    expect(asked).toBe(0);
  });

  it("carries traces once an endpoint with trace context exists, asking at most every refresh interval", async () => {
    let now = 0;
    let traced = false;
    let asked = 0;
    const gate = new TraceGate(
      async () => (asked++, traced),
      false,
      () => now,
    );
    expect(gate.carry()).toBe(false);
    await settle();
    expect(asked).toBe(1);
    traced = true;
    now += TRACE_GATE_REFRESH_MS - 1;
    expect(gate.carry()).toBe(false);
    await settle();
    expect(asked).toBe(1);
    now += 1;
    gate.carry();
    await settle();
    expect(asked).toBe(2);
    expect(gate.carry()).toBe(true);
  });

  it("carries at once when this process switches an endpoint's trace context on", () => {
    const gate = new TraceGate(async () => false, false);
    gate.endpointTraced();
    expect(gate.carry()).toBe(true);
  });

  it("keeps its last answer when the database cannot be asked", async () => {
    let now = 0;
    let fail = false;
    const gate = new TraceGate(
      async () => {
        if (fail) throw new Error("database down");
        return true;
      },
      false,
      () => now,
    );
    gate.carry();
    await settle();
    expect(gate.carry()).toBe(true);
    fail = true;
    now += TRACE_GATE_REFRESH_MS;
    gate.carry();
    await settle();
    expect(gate.carry()).toBe(true);
  });
});
