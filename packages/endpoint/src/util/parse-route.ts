import { BoundedCache } from "./bounded-cache.js";

type Route = readonly [method: string | undefined, url: string];

const cache = new BoundedCache<Route>(1000);

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
  return cache.get(route) ?? cache.set(route, split(route));
}
