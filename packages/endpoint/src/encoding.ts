// Percent-encoding (RFC 3986) of url text, UTF-8 bytes of code points, and code-point counting.
// Nothing here throws: a lone surrogate is encoded as U+FFFD where `encodeURIComponent` would
// throw a URIError.

/** `%XX` (uppercase hex, as RFC 3986 recommends) for every byte value, built once. */
const HEX: readonly string[] = Array.from(
  { length: 256 },
  (_, byte) => "%" + byte.toString(16).toUpperCase().padStart(2, "0"),
);

/** What a character table says about an ASCII character; 0 (the default) is "encode it". */
const KEEP = 1;
/** `%`: kept when it starts a `%XX` triplet, else encoded as `%25`. */
const KEEP_TRIPLET = 2;

const UNRESERVED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";
const RESERVED = ":/?#[]@!$&'()*+,;=";

function table(keep: string, keepTriplets = false): Uint8Array {
  const codes = new Uint8Array(128);
  for (const char of keep) codes[char.charCodeAt(0)] = KEEP;
  if (keepTriplets) codes[0x25] = KEEP_TRIPLET;
  return codes;
}

const UNRESERVED_TABLE = table(UNRESERVED);
const RESERVED_TABLE = table(UNRESERVED + RESERVED, true);
const SEARCH_QUERY_TABLE = table(UNRESERVED + "+");

function isHexDigit(unit: number): boolean {
  return (
    (unit >= 0x30 && unit <= 0x39) ||
    (unit >= 0x41 && unit <= 0x46) ||
    (unit >= 0x61 && unit <= 0x66)
  );
}

/**
 * Percent-encodes every character that `codes` does not keep; characters outside ASCII always
 * become their UTF-8 bytes. Returns the input itself when nothing needs encoding (the common
 * case, no allocation).
 */
function percentEncode(text: string, codes: Uint8Array): string {
  let out = "";
  let copied = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 128) {
      const code = codes[unit];
      if (code === KEEP) continue;
      if (
        code === KEEP_TRIPLET &&
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
    // The code point of a valid surrogate pair, else the lone UTF-16 unit itself.
    const codePoint = text.codePointAt(i)!;
    out += text.slice(copied, i) + encodeUtf8(codePoint);
    if (codePoint > 0xffff) i++;
    copied = i + 1;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * Percent-encodes every character outside RFC 3986's unreserved set (`A-Z a-z 0-9 - . _ ~`), as
 * RFC 6570 simple string expansion does. Unlike `encodeURIComponent` it also encodes `!'()*`.
 */
export function encodeUnreserved(text: string): string {
  return percentEncode(text, UNRESERVED_TABLE);
}

/**
 * Percent-encodes what RFC 6570 reserved expansion (`{+var}`, `{#var}`) and template literals
 * must encode: characters that are neither unreserved nor reserved. An existing `%XX` triplet is
 * kept; a `%` that starts no triplet becomes `%25`.
 */
export function encodeReserved(text: string): string {
  return percentEncode(text, RESERVED_TABLE);
}

/**
 * Encodes a search query (`q`) word by word and keeps its `+` separators, so
 * `"is:open+label:bug"` stays readable as `is%3Aopen+label%3Abug`. A literal plus inside a term
 * cannot be expressed this way; put `q` in the url as `{?q}` to encode it as `%2B`.
 */
export function encodeSearchQuery(query: string): string {
  return percentEncode(query, SEARCH_QUERY_TABLE);
}

/**
 * Percent-encodes the UTF-8 bytes of one code point (>= 0x80).
 * A lone surrogate becomes U+FFFD, as `String.prototype.toWellFormed` does.
 */
function encodeUtf8(codePoint: number): string {
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

/** The first `count` code points of `text` (RFC 6570 prefixes count characters, not UTF-16 units). */
export function takeCodePoints(text: string, count: number): string {
  let index = 0;
  for (let taken = 0; taken < count && index < text.length; taken++) {
    index += text.codePointAt(index)! > 0xffff ? 2 : 1;
  }
  return index >= text.length ? text : text.slice(0, index);
}
