import { describe, expect, it } from "vitest";
import { formatAmount } from "../../../src/webhooks/inbound/senders/format-amount.js";

describe("formatAmount", () => {
  it.each([
    [1234, "eur", "12.34 EUR"],
    [5, "usd", "0.05 USD"],
    [0, "gbp", "0.00 GBP"],
    [-250, "eur", "-2.50 EUR"],
    [1234, "jpy", "1234 JPY"],
    [1234, "krw", "1234 KRW"],
    [1234, "kwd", "1.234 KWD"],
    [12345678901234, "usd", "123456789012.34 USD"],
    [1234, "xyz", "12.34 XYZ"],
  ])("shows %d in %s's minor unit as %s", (minor, currency, expected) => {
    expect(formatAmount(minor, currency)).toBe(expected);
  });
});
