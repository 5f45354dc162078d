import { codePointAt } from "./code-point-at.js";
import { encodeUtf8 } from "./encode-utf8.js";
import { PERCENT_ENCODED_BYTE as HEX } from "./percent-encode-byte.js";

// RFC 3986 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~". Everything else is encoded.
const UNRESERVED = new Uint8Array(128);
for (const char of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~") {
  UNRESERVED[char.charCodeAt(0)] = 1;
}

/**
 * Percent-encodes every character outside RFC 3986's unreserved set, as RFC 6570 simple string
 * expansion does. Unlike `encodeURIComponent` it also encodes `!'()*` and never throws.
 * Returns the input itself when nothing needs encoding (the common case, no allocation).
 */
export function encodeUnreserved(text: string): string {
  let out = "";
  let copied = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 128) {
      if (UNRESERVED[unit] === 1) continue;
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
