import type { EndpointInterface, EndpointOptions } from "@parley/endpoint";
import { fetchWrapper } from "./fetch-wrapper.js";
import type { RequestInterface } from "./types/request.js";

/**
 * A request function bound to `oldEndpoint` with `newDefaults` layered on; `.defaults()` on it
 * binds again, so layers cascade exactly as they do for `endpoint`.
 */
export function withDefaults(
  oldEndpoint: EndpointInterface,
  newDefaults: EndpointOptions,
): RequestInterface {
  const endpoint = oldEndpoint.defaults(newDefaults);
  const request = (route: string | EndpointOptions, params?: EndpointOptions) =>
    fetchWrapper(endpoint.parse(endpoint.merge(route as string, params)));
  return Object.assign(request, {
    endpoint,
    defaults: (options: EndpointOptions) => withDefaults(endpoint, options),
  }) as unknown as RequestInterface;
}
