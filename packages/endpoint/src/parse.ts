import { buildRequest } from "./build-request.js";
import type { EndpointOptions, RequestOptions } from "./types.js";

/**
 * Merged options (usually from `.merge()`) to request options. Stateless: no defaults apply.
 * See `buildRequest` for the routing of url placeholders, query parameters and body keys.
 */
export function parse(options: EndpointOptions): RequestOptions {
  return buildRequest(null, undefined, options);
}
