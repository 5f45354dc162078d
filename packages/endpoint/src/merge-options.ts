import { mergeMediaType } from "./media-type.js";
import { mergeHeaders, mergeRequest, withoutUndefined } from "./merge-fields.js";
import { parseRoute } from "./route.js";
import type { EndpointDefaults, EndpointOptions } from "./types.js";

/**
 * `endpoint.merge()`: layers a call's route and options over `defaults`, keeping url
 * placeholders; merge-fields.ts merges the single fields. Keys whose value is `undefined` are
 * skipped, so they never override a default; `null` is a value and does.
 * Header names are lowercased, `mediaType.previews` accumulate, `request` objects are merged
 * shallowly; every other key (nested objects included) replaces the default's value whole.
 * Returns fresh top-level, `headers` and `mediaType` objects and never writes to its inputs.
 */
export function mergeOptions(
  defaults: EndpointDefaults | null,
  route?: string | EndpointOptions | null,
  options?: EndpointOptions | null,
): EndpointDefaults {
  const input = typeof route === "string" ? options : route;
  const given = typeof input === "object" && input !== null ? withoutUndefined(input) : undefined;

  // Object spread keeps order: the defaults' keys first (so their query parameters come first),
  // then the call's. It also copies a `__proto__` key as an ordinary own property.
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
  const { format, previews } = mergeMediaType(defaults?.mediaType, given?.mediaType);
  merged.mediaType = { format, previews: [...previews] };
  const request = mergeRequest(defaults?.request, given?.request);
  if (request !== undefined) merged.request = request;
  return merged as EndpointDefaults;
}
