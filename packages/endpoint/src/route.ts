// The route string and the url a request goes to: `"METHOD url"` split, a relative url joined to
// `baseUrl`, query parameters formatted and appended.
import { BoundedCache } from "./bounded-cache.js";
import { encodeSearchQuery, encodeUnreserved } from "./encoding.js";
import { isPlainObject } from "./objects.js";

/** A route string split: the method (lowercase) when it names one, and the url. */
export type Route = readonly [method: string | undefined, url: string];

const routes = new BoundedCache<Route>(1000);

function split(route: string): Route {
  const trimmed = route.trim();
  const space = trimmed.search(/\s/);
  if (space === -1) return [undefined, trimmed];
  return [trimmed.slice(0, space).toLowerCase(), trimmed.slice(space + 1).trimStart()];
}

/**
 * `"POST /rooms/{roomId}/messages"` to `["post", "/rooms/{roomId}/messages"]`; a lone url has no
 * method (the defaults in effect supply it). Cached: routes are usually a handful of literals.
 */
export function parseRoute(route: string): Route {
  return routes.get(route) ?? routes.set(route, split(route));
}

// A scheme followed by "//": http://, https://, ws://, ...
const ABSOLUTE = /^[A-Za-z][A-Za-z\d+.-]*:\/\//;

export function isAbsoluteUrl(url: string): boolean {
  return ABSOLUTE.test(url);
}

/** `baseUrl` followed by a relative url, with one slash where both have one. */
export function joinBaseUrl(baseUrl: unknown, url: string): string {
  if (baseUrl === undefined || baseUrl === null) return url;
  const base = typeof baseUrl === "string" ? baseUrl : String(baseUrl);
  return base.endsWith("/") && url.startsWith("/") ? base + url.slice(1) : base + url;
}

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

/** Appends an encoded query string to a url, after any query it has and before any fragment. */
export function appendQuery(url: string, query: string): string {
  const hash = url.indexOf("#");
  const base = hash === -1 ? url : url.slice(0, hash);
  const fragment = hash === -1 ? "" : url.slice(hash);
  const separator = !base.includes("?") ? "?" : base.endsWith("?") || base.endsWith("&") ? "" : "&";
  return base + separator + query + fragment;
}
