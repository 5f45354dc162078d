import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseInstant } from "../../../src/time/parse-instant.js";

describe("parseInstant", () => {
  it.each([
    ["2026-11-20T08:00:00Z", "2026-11-20T08:00:00.000Z"],
    ["2026-11-20T09:00:00+01:00", "2026-11-20T08:00:00.000Z"],
    ["2026-11-20T07:30:00-00:30", "2026-11-20T08:00:00.000Z"],
    ["2026-11-20t08:00:00z", "2026-11-20T08:00:00.000Z"],
    ["2026-11-20 08:00:00Z", "2026-11-20T08:00:00.000Z"],
    ["2026-11-20T08:00:00.5Z", "2026-11-20T08:00:00.500Z"],
    ["2026-11-20T08:00:00.123456789Z", "2026-11-20T08:00:00.123Z"],
    ["2028-02-29T00:00:00Z", "2028-02-29T00:00:00.000Z"],
    ["2000-02-29T00:00:00Z", "2000-02-29T00:00:00.000Z"],
    // Far past and far future, as far as four digits go: the years 0 and 9999.
    ["0000-01-01T00:00:00Z", "0000-01-01T00:00:00.000Z"],
    ["0050-06-01T00:00:00Z", "0050-06-01T00:00:00.000Z"],
    ["9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"],
    ["9999-12-31T23:59:59.999+23:59", "9999-12-31T00:00:59.999Z"],
  ])("reads %s as %s", (text, iso) => {
    const at = parseInstant(text);
    expect(at).toBeTypeOf("number");
    expect(new Date(at!).toISOString()).toBe(iso);
  });

  it.each([
    // A leap second: RFC 3339 allows it, no epoch time holds it; Date.parse answers NaN.
    "2026-06-30T23:59:60Z",
    "2026-07-01T00:59:60+01:00",
    // Beyond four digits, as Date's own ISO form writes them.
    "+275760-09-13T00:00:00.001Z",
    "+275760-09-13T00:00:00.000Z",
    "-271821-04-20T00:00:00.000Z",
    // An offset that moves a time out of the years 0 to 9999 (its ISO form would not read back).
    "9999-12-31T23:59:59.999-00:01",
    "0000-01-01T00:00:00+00:01",
    "2026-02-29T00:00:00Z",
    "2026-04-31T00:00:00Z",
    "2026-13-01T00:00:00Z",
    "2026-00-01T00:00:00Z",
    "2026-11-00T00:00:00Z",
    "2026-11-20T24:00:00Z",
    "2026-11-20T08:60:00Z",
    // Offsets RFC 3339 does not have (ajv-formats let them through; Date.parse reads +01 as NaN).
    "2026-11-20T09:00:00+01",
    "2026-11-20T09:00:00+0100",
    "2026-11-20T08:00:00+24:00",
    "2026-11-20T08:00:00+01:60",
    "2026-11-20T08:00:00",
    "2026-11-20T08:00Z",
    "2026-11-20",
    "2026-11-20\t08:00:00Z",
    "2026-11-20T08:00:00.Z",
    " 2026-11-20T08:00:00Z",
    "1795161600000",
    "NaN",
    "",
  ])("reads no instant in %j", (text) => {
    expect(parseInstant(text)).toBeUndefined();
  });

  it("answers the instant Date.parse answers, for every time Date writes in four-digit years", () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date("0000-01-01T00:00:00.000Z"),
          max: new Date("9999-12-31T23:59:59.999Z"),
          noInvalidDate: true,
        }),
        (date) => {
          expect(parseInstant(date.toISOString())).toBe(date.getTime());
        },
      ),
    );
  });
});
