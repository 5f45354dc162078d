import type { EndpointDefaults, EndpointOptions, MediaType } from "./types.js";
import { isPlainObject } from "./util/is-plain-object.js";
import { mergePreviews } from "./util/merge-previews.js";
import { parseRoute } from "./util/parse-route.js";
import { withoutUndefined } from "./util/without-undefined.js";

/**
 * Layers a call's options over `defaults`, keeping url placeholders. Keys whose value is
 * `undefined` are skipped, so they never override a default; `null` is a value and does.
 * Header names are lowercased, `mediaType.previews` accumulate, `request` objects are merged
 * shallowly; every other key (nested objects included) replaces the default's value whole.
 * Returns fresh top-level, `headers` and `mediaType` objects and never writes to its inputs.
 */
export function merge(
  defaults: EndpointDefaults | null,
  route?: string | EndpointOptions | null,
  options?: EndpointOptions | null,
): EndpointDefaults {
  const input = typeof route === "string" ? options : route;
  const given = typeof input === "object" && input !== null ? withoutUndefined(input) : undefined;

  // Object spread is the fastest way to copy many keys, and it keeps order: the defaults' keys
  // first (so their query parameters come first), then the call's. It also copies a
  // `__proto__` key as an ordinary own property.
  let merged: Record<string, unknown>;
  if (typeof route === "string") {
    const [method, url] = parseRoute(route);
    merged =
      method === undefined
        ? { ...defaults, url, ...given }
        : { ...defaults, method, url, ...given };
  } else {
    merged = { ...defaults, ...given };
  }

  merged.method =
    given?.method === undefined ? (merged.method ?? "get") : String(given.method).toLowerCase();
  merged.headers = mergeHeaders(defaults?.headers, given?.headers);
  merged.mediaType = mergeMediaType(defaults?.mediaType, given?.mediaType);
  const request = mergeRequest(defaults?.request, given?.request);
  if (request !== undefined) merged.request = request;
  return merged as EndpointDefaults;
}

function mergeHeaders(defaults: object | undefined, given: unknown): Record<string, unknown> {
  // Object.assign, not a spread: V8 adds properties slowly to a spread copy of a non-frozen object.
  const headers = Object.assign({}, defaults) as Record<string, unknown>;
  if (typeof given === "object" && given !== null) {
    for (const name of Object.keys(given)) {
      const value = (given as Record<string, unknown>)[name];
      if (value !== undefined) headers[name.toLowerCase()] = value;
    }
  }
  return headers;
}

function mergeMediaType(
  defaults: EndpointDefaults["mediaType"] | undefined,
  given: unknown,
): EndpointDefaults["mediaType"] {
  let format: unknown = defaults?.format ?? "";
  let previews: readonly unknown[] = defaults?.previews ?? [];
  if (typeof given === "object" && given !== null) {
    const mediaType = given as MediaType;
    if (mediaType.format !== undefined) format = mediaType.format;
    if (Array.isArray(mediaType.previews)) previews = mergePreviews(previews, mediaType.previews);
  }
  // Array.prototype.slice takes a slow path on frozen arrays (the defaults' are frozen).
  return {
    format: format as string,
    previews: previews.length === 0 ? [] : [...(previews as string[])],
  };
}

function mergeRequest(defaults: unknown, given: unknown): unknown {
  if (given === undefined) return defaults;
  return isPlainObject(defaults) && isPlainObject(given)
    ? { ...defaults, ...withoutUndefined(given) }
    : given;
}
