/**
 * The first `maxBytes` bytes of a response body as text for the attempt log. A multi-byte character
 * cut by the limit is dropped rather than stored as U+FFFD, and the result never needs more than
 * `maxBytes` bytes in UTF-8, so it fits the column it is stored in.
 */
export function decodeUtf8Prefix(bytes: Uint8Array, maxBytes: number): string {
  // stream: true holds back a trailing incomplete sequence instead of decoding it as U+FFFD.
  const decoded = new TextDecoder("utf-8").decode(bytes.subarray(0, maxBytes), { stream: true });
  // PostgreSQL text cannot hold U+0000; a receiver answering with binary must not break the log.
  const text = decoded.replaceAll("\u0000", "\uFFFD");
  if (Buffer.byteLength(text, "utf8") <= maxBytes) return text;

  // Invalid bytes become U+FFFD (3 bytes each), which can outgrow the limit: cut on a character.
  let kept = "";
  let used = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char, "utf8");
    if (used + size > maxBytes) break;
    kept += char;
    used += size;
  }
  return kept;
}
