import type { EndpointDefaults, EndpointOptions, MediaType } from "./types.js";
import { isPlainObject } from "./util/is-plain-object.js";
import { mergePreviews } from "./util/merge-previews.js";
import { parseRoute } from "./util/parse-route.js";
import { setOwn } from "./util/set-own.js";

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
  // Spreading keeps the defaults' key order, so their query parameters come first.
  const merged: Record<string, unknown> = defaults === null ? {} : { ...defaults };
  const headers: Record<string, unknown> = defaults === null ? {} : { ...defaults.headers };
  let format: unknown = defaults === null ? "" : defaults.mediaType.format;
  let previews: readonly unknown[] = defaults === null ? [] : defaults.mediaType.previews;
  let request: unknown = defaults?.request;

  let input: unknown = route;
  if (typeof route === "string") {
    const [method, url] = parseRoute(route);
    if (method !== undefined) merged.method = method;
    merged.url = url;
    input = options;
  }

  if (typeof input === "object" && input !== null) {
    const given = input as Record<string, unknown>;
    for (const key of Object.keys(given)) {
      const value = given[key];
      if (value === undefined) continue;
      switch (key) {
        case "method":
          merged.method = String(value).toLowerCase();
          break;
        case "headers":
          if (typeof value === "object" && value !== null) {
            for (const name of Object.keys(value)) {
              const header = (value as Record<string, unknown>)[name];
              if (header !== undefined) headers[name.toLowerCase()] = header;
            }
          }
          break;
        case "mediaType":
          if (typeof value === "object" && value !== null) {
            const mediaType = value as MediaType;
            if (mediaType.format !== undefined) format = mediaType.format;
            if (Array.isArray(mediaType.previews)) {
              previews = mergePreviews(previews, mediaType.previews);
            }
          }
          break;
        case "request":
          if (isPlainObject(request) && isPlainObject(value)) {
            const layered = { ...request };
            for (const name of Object.keys(value)) {
              if (value[name] !== undefined) setOwn(layered, name, value[name]);
            }
            request = layered;
          } else {
            request = value;
          }
          break;
        default:
          setOwn(merged, key, value);
      }
    }
  }

  merged.method ??= "get";
  merged.headers = headers;
  merged.mediaType = { format, previews: previews.slice() };
  if (request !== undefined) merged.request = request;
  return merged as EndpointDefaults;
}
