import { merge } from "./merge.js";
import { parse } from "./parse.js";
import type { EndpointDefaults, EndpointInterface, EndpointOptions } from "./types.js";
import { frozenCopy } from "./util/frozen-copy.js";

/**
 * An endpoint function bound to `newDefaults` layered over `oldDefaults`. `.defaults()` on it
 * binds again, so layers cascade without classes; the bound defaults are a frozen copy.
 */
export function withDefaults<D extends object = object>(
  oldDefaults: EndpointDefaults | null,
  newDefaults: EndpointOptions,
): EndpointInterface<D> {
  const DEFAULTS = frozenCopy(merge(oldDefaults, newDefaults));
  const endpoint = (route?: string | EndpointOptions, options?: EndpointOptions) =>
    parse(merge(DEFAULTS, route, options));
  return Object.assign(endpoint, {
    DEFAULTS,
    defaults: (options: EndpointOptions) => withDefaults(DEFAULTS, options),
    merge: (route?: string | EndpointOptions, options?: EndpointOptions) =>
      merge(DEFAULTS, route, options),
    parse,
  }) as unknown as EndpointInterface<D>;
}
