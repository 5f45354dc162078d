import { describe, expect, it } from "vitest";
import { CliError } from "../../../src/cli/cli-error.js";
import { parseTime } from "../../../src/cli/parse-time.js";
import { parseInstant } from "../../../src/time/parse-instant.js";
import { describeHealth } from "../../../src/cli/webhooks-health.js";

describe("parseTime (--since, --until)", () => {
  const now = Date.parse("2026-11-25T12:00:00.000Z");

  it("takes ISO dates and times, answering the instant in UTC", () => {
    expect(parseTime("2026-11-20T08:00:00Z", "--since", now)).toBe("2026-11-20T08:00:00.000Z");
    expect(parseTime("2026-11-20T09:00:00+01:00", "--since", now)).toBe("2026-11-20T08:00:00.000Z");
    expect(parseTime(" 2026-11-20 ", "--since", now)).toBe("2026-11-20T00:00:00.000Z");
  });

  it("takes a duration ago in seconds, minutes, hours or days", () => {
    expect(parseTime("90s", "--since", now)).toBe("2026-11-25T11:58:30.000Z");
    expect(parseTime("15m", "--since", now)).toBe("2026-11-25T11:45:00.000Z");
    expect(parseTime("12H", "--since", now)).toBe("2026-11-25T00:00:00.000Z");
    expect(parseTime("7d", "--until", now)).toBe("2026-11-18T12:00:00.000Z");
  });

  it("agrees with the API: every date-time it takes the API takes too, as the same instant", () => {
    for (const text of [
      "2026-11-20T09:00:00-01:30",
      "2026-11-20t08:00:00z",
      "2026-11-20 08:00:00.5Z",
      "0000-01-01T00:00:00Z",
      "9999-12-31T23:59:59.999Z",
    ]) {
      const iso = parseTime(text, "--since", now);
      expect(parseInstant(iso), text).toBe(parseInstant(text));
    }
  });

  it("refuses what the API refuses: a leap second, a time without a zone, beyond the year 9999", () => {
    for (const bad of [
      "2026-06-30T23:59:60Z",
      "2026-11-20T09:00:00+01",
      "2026-11-20T09:00:00+0100",
      "2026-11-20T08:00",
      "2026-11-20T08:00:00",
      "+275760-09-13T00:00:00.001Z",
      "2026-02-29",
    ]) {
      expect(() => parseTime(bad, "--since", now), bad).toThrow(CliError);
    }
  });

  it("refuses a duration reaching before the year 0 with its message, not a RangeError", () => {
    for (const far of ["99999999999d", "9999999999999999999999s", "800000d"]) {
      expect(() => parseTime(far, "--since", now), far).toThrow(
        /^--since must be an ISO date or time/,
      );
    }
    expect(parseTime("700000d", "--since", now)).toMatch(/^0\d{3}-/);
  });

  it("refuses anything else, naming the flag and the forms it takes", () => {
    for (const bad of ["yesterday", "1w", "", "2026-13-45", "-5m", "1700000000"]) {
      expect(() => parseTime(bad, "--since", now)).toThrow(CliError);
    }
    expect(() => parseTime("soon", "--until", now)).toThrow(
      /^--until must be an ISO date or time .* or a duration ago .*; got "soon"$/,
    );
  });
});

describe("describeHealth", () => {
  const webhook = {
    id: 4,
    name: "audit",
    url: "https://example.com/hook",
    enabled: false,
    disabledReason: "auto_failing" as const,
    disabledAt: "2026-11-25T10:00:00.000Z",
    health: {
      attempts24h: 40,
      successRate24h: 0.875,
      p50LatencyMs24h: 12,
      p95LatencyMs24h: 230,
      lastSuccessAt: "2026-11-25T09:00:00.000Z",
      lastFailureAt: "2026-11-25T09:59:00.000Z",
      lastError: "receiver answered HTTP 503",
      consecutiveFailures: 5,
      circuit: "open",
    },
  };

  it("prints the state, the last 24 hours and the current run of failures, aligned", () => {
    const lines = describeHealth(webhook as Parameters<typeof describeHealth>[0]);
    expect(lines).toEqual([
      'Webhook 4 "audit" -> https://example.com/hook',
      "  state:                disabled by Parley: it kept failing (2026-11-25T10:00:00.000Z)",
      "  attempts (24 h):      40",
      "  success rate (24 h):  87.5%",
      "  latency (24 h):       p50 12 ms, p95 230 ms",
      "  last success:         2026-11-25T09:00:00.000Z",
      "  last failure:         2026-11-25T09:59:00.000Z",
      "  last error:           receiver answered HTTP 503",
      "  failures in a row:    5",
      "  circuit:              open: time-outs or connection failures in a row; deliveries wait for a probe",
    ]);
  });

  it("shows dashes without attempts", () => {
    const idle = {
      ...webhook,
      enabled: true,
      disabledReason: null,
      disabledAt: null,
      health: {
        attempts24h: 0,
        successRate24h: null,
        p50LatencyMs24h: null,
        p95LatencyMs24h: null,
        lastSuccessAt: null,
        lastFailureAt: null,
        lastError: null,
        consecutiveFailures: 0,
        circuit: "closed",
      },
    };
    const lines = describeHealth(idle as Parameters<typeof describeHealth>[0]);
    expect(lines[1]).toBe("  state:                enabled");
    expect(lines[3]).toBe("  success rate (24 h):  -");
    expect(lines[4]).toBe("  latency (24 h):       -");
  });
});
