import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { passesLuhn } from "../../../src/safety/dlp/luhn.js";

describe("passesLuhn", () => {
  it.each(["4111111111111111", "5555555555554444", "378282246310005", "79927398713", "0"])(
    "accepts the valid number %s",
    (digits) => expect(passesLuhn(digits)).toBe(true),
  );

  it.each(["4111111111111112", "79927398710", "1234567812345678"])(
    "rejects the invalid number %s",
    (digits) => expect(passesLuhn(digits)).toBe(false),
  );

  it("rejects anything that is not only digits", () => {
    expect(passesLuhn("")).toBe(false);
    expect(passesLuhn("4111 1111 1111 1111")).toBe(false);
  });

  it("detects every single-digit typo", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: 12, maxLength: 18 }),
        fc.nat(),
        fc.integer({ min: 1, max: 9 }),
        (body, position, delta) => {
          const check = [...Array(10).keys()].find((d) => passesLuhn(body + d))!;
          const valid = body + check;
          const i = position % valid.length;
          const typo = valid.slice(0, i) + ((Number(valid[i]) + delta) % 10) + valid.slice(i + 1);
          expect(passesLuhn(valid)).toBe(true);
          expect(passesLuhn(typo)).toBe(false);
        },
      ),
    );
  });
});
