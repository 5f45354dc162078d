import { describe, expect, it } from "vitest";
import { decodeUtf8Prefix } from "../../../../../src/webhooks/outbound/transport/decode-utf8-prefix.js";

const bytes = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));

describe("decodeUtf8Prefix", () => {
  it("returns a short body whole", () => {
    expect(decodeUtf8Prefix(bytes("ok ✓"), 2048)).toBe("ok ✓");
  });

  it("returns an empty string for an empty body", () => {
    expect(decodeUtf8Prefix(new Uint8Array(0), 2048)).toBe("");
  });

  it.each([
    ["a 2-byte character", "é", 1],
    ["a 3-byte character", "€", 1],
    ["a 3-byte character", "€", 2],
    ["a 4-byte character", "🎉", 1],
    ["a 4-byte character", "🎉", 3],
  ])("drops %s cut after %i byte(s) instead of decoding it as U+FFFD", (_name, char, keep) => {
    const body = bytes("abc", char, "def");
    expect(decodeUtf8Prefix(body, 3 + keep)).toBe("abc");
  });

  it("keeps invalid bytes inside the prefix as U+FFFD", () => {
    expect(decodeUtf8Prefix(bytes("a", [0xff], "b"), 10)).toBe("a\uFFFDb");
  });

  it("replaces NUL, which PostgreSQL text cannot store", () => {
    expect(decodeUtf8Prefix(bytes("a", [0x00], "b"), 10)).toBe("a\uFFFDb");
  });

  it("never needs more than maxBytes in UTF-8, even when replacements grow the text", () => {
    const binary = Buffer.alloc(2048, 0xff);
    const text = decodeUtf8Prefix(binary, 2048);
    expect(Buffer.byteLength(text, "utf8")).toBeLessThanOrEqual(2048);
    expect(text).toBe("\uFFFD".repeat(682));
  });
});
