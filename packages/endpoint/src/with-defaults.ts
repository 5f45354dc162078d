import { buildRequest } from "./build-request.js";
import { frozenCopy } from "./frozen-copy.js";
import { mergeOptions } from "./merge-options.js";
import { parse } from "./parse.js";
import { parseRoute } from "./route.js";
import type { EndpointDefaults, EndpointInterface, EndpointOptions } from "./types.js";

/**
 * An endpoint function bound to `newDefaults` layered over `oldDefaults`. `.defaults()` on it
 * binds again, so layers cascade without classes; the bound defaults are a frozen copy.
 */
export function withDefaults<D extends object = object>(
  oldDefaults: EndpointDefaults | null,
  newDefaults: EndpointOptions,
): EndpointInterface<D> {
  const DEFAULTS = frozenCopy(mergeOptions(oldDefaults, newDefaults));
  // Equal to parse(mergeOptions(DEFAULTS, route, options)) without building the merged copy.
  const endpoint = (route?: string | EndpointOptions, options?: EndpointOptions) =>
    typeof route === "string"
      ? buildRequest(DEFAULTS, parseRoute(route), options)
      : buildRequest(DEFAULTS, undefined, route);
  return Object.assign(endpoint, {
    DEFAULTS,
    defaults: (options: EndpointOptions) => withDefaults(DEFAULTS, options),
    merge: (route?: string | EndpointOptions, options?: EndpointOptions) =>
      mergeOptions(DEFAULTS, route, options),
    parse,
  }) as unknown as EndpointInterface<D>;
}
