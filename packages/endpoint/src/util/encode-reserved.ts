import { codePointAt } from "./code-point-at.js";
import { encodeUtf8 } from "./encode-utf8.js";
import { PERCENT_ENCODED_BYTE as HEX } from "./percent-encode-byte.js";

// RFC 3986 unreserved + reserved (gen-delims and sub-delims): allowed as they are.
const ALLOWED = new Uint8Array(128);
for (const char of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=") {
  ALLOWED[char.charCodeAt(0)] = 1;
}

function isHexDigit(unit: number): boolean {
  return (
    (unit >= 0x30 && unit <= 0x39) ||
    (unit >= 0x41 && unit <= 0x46) ||
    (unit >= 0x61 && unit <= 0x66)
  );
}

/**
 * Percent-encodes what RFC 6570 reserved expansion (`{+var}`, `{#var}`) and template literals
 * must encode: characters that are neither unreserved nor reserved. An existing `%XX` triplet is
 * kept; a `%` that starts no triplet becomes `%25`. Returns the input itself when nothing changes.
 */
export function encodeReserved(text: string): string {
  let out = "";
  let copied = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 128) {
      if (ALLOWED[unit] === 1) continue;
      if (
        unit === 0x25 &&
        isHexDigit(text.charCodeAt(i + 1)) &&
        isHexDigit(text.charCodeAt(i + 2))
      ) {
        i += 2;
        continue;
      }
      out += text.slice(copied, i) + HEX[unit]!;
      copied = i + 1;
      continue;
    }
    const [codePoint, units] = codePointAt(text, i);
    out += text.slice(copied, i) + encodeUtf8(codePoint);
    i += units - 1;
    copied = i + 1;
  }
  return copied === 0 ? text : out + text.slice(copied);
}
