import { encodeSearchQuery } from "./encode-search-query.js";
import { encodeUnreserved } from "./encode-unreserved.js";
import { isPlainObject } from "./is-plain-object.js";

/**
 * One `name=value` pair for the query string, encoded per RFC 3986 as RFC 6570's `{?name}` would
 * (arrays comma-joined, objects as `key,value` pairs), except that `q` keeps its `+` separators.
 * Undefined when there is nothing to send: `null`, an empty array or object.
 */
export function formatQueryParameter(name: string, value: unknown): string | undefined {
  if (value === null) return undefined;
  const encode = name === "q" ? encodeSearchQuery : encodeUnreserved;
  let text: string;
  if (Array.isArray(value)) {
    const items = (value as unknown[]).filter((item) => item !== undefined && item !== null);
    if (items.length === 0) return undefined;
    text = items.map((item) => encode(String(item))).join(",");
  } else if (isPlainObject(value)) {
    const pairs: string[] = [];
    for (const key of Object.keys(value)) {
      const item = value[key];
      if (item !== undefined && item !== null) pairs.push(encode(key), encode(String(item)));
    }
    if (pairs.length === 0) return undefined;
    text = pairs.join(",");
  } else {
    text = encode(String(value));
  }
  return `${encodeUnreserved(name)}=${text}`;
}
