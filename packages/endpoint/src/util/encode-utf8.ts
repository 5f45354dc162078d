import { PERCENT_ENCODED_BYTE as HEX } from "./percent-encode-byte.js";

/**
 * Percent-encodes the UTF-8 bytes of one code point (>= 0x80).
 * A lone surrogate becomes U+FFFD, as `String.prototype.toWellFormed` does, so encoding never
 * throws (`encodeURIComponent` would throw a URIError).
 */
export function encodeUtf8(codePoint: number): string {
  if (codePoint < 0x800) {
    return HEX[0xc0 | (codePoint >> 6)]! + HEX[0x80 | (codePoint & 0x3f)]!;
  }
  if (codePoint >= 0xd800 && codePoint <= 0xdfff) {
    return "%EF%BF%BD";
  }
  if (codePoint < 0x10000) {
    return (
      HEX[0xe0 | (codePoint >> 12)]! +
      HEX[0x80 | ((codePoint >> 6) & 0x3f)]! +
      HEX[0x80 | (codePoint & 0x3f)]!
    );
  }
  return (
    HEX[0xf0 | (codePoint >> 18)]! +
    HEX[0x80 | ((codePoint >> 12) & 0x3f)]! +
    HEX[0x80 | ((codePoint >> 6) & 0x3f)]! +
    HEX[0x80 | (codePoint & 0x3f)]!
  );
}
