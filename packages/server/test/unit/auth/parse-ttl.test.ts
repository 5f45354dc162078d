import { describe, expect, it } from "vitest";
import { parseTtl } from "../../../src/auth/token-service.js";

describe("parseTtl (parley token create --ttl)", () => {
  it.each([
    ["90", 90],
    ["90s", 90],
    ["15m", 900],
    ["12h", 43_200],
    ["30d", 2_592_000],
    [" 7d ", 604_800],
    ["1 h", 3_600],
  ])("reads %j as %i seconds", (text, seconds) => {
    expect(parseTtl(text)).toBe(seconds);
  });

  it.each(["", "abc", "10x", "1.5h", "-5", "+5", "h", "5 days", "10dd", "0x10"])(
    "refuses %j, saying what it takes",
    (text) => {
      expect(() => parseTtl(text)).toThrow(
        `invalid TTL "${text}": use a number of seconds or 90s, 15m, 12h, 30d`,
      );
    },
  );

  it.each(["0", "0s", "0d", "000m"])("refuses %j: a token must live at least a second", (text) => {
    expect(() => parseTtl(text)).toThrow("TTL must be at least one second");
  });
});
