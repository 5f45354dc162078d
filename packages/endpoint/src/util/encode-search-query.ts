import { encodeUnreserved } from "./encode-unreserved.js";

/**
 * Encodes a search query (`q`) word by word and keeps its `+` separators, so
 * `"is:open+label:bug"` stays readable as `is%3Aopen+label%3Abug`. A literal plus inside a term
 * cannot be expressed this way; put `q` in the url as `{?q}` to encode it as `%2B`.
 */
export function encodeSearchQuery(query: string): string {
  return query.split("+").map(encodeUnreserved).join("+");
}
