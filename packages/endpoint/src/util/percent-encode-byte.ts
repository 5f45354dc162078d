/** `%XX` (uppercase hex, as RFC 3986 recommends) for every byte value, built once. */
export const PERCENT_ENCODED_BYTE: readonly string[] = Array.from(
  { length: 256 },
  (_, byte) => "%" + byte.toString(16).toUpperCase().padStart(2, "0"),
);
