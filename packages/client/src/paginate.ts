import { ParleyError } from "./errors/parley-error.js";
import type { Page } from "./types/api.js";
import type { LooseRequestParameters, RequestInterface, RouteArguments } from "./types/request.js";
import type { PageItem, PaginatedRoute } from "./types/routes.js";

export interface PaginateInterface {
  /**
   * The pages of a list route, fetched one at a time as the loop asks for them: each answer's
   * `nextCursor` is sent back as `cursor` until it is null. Other parameters (`limit`, filters)
   * go with every call.
   *
   *   for await (const page of paginate(request, "GET /api/admin/users", { limit: 100 })) ...
   */
  <R extends string>(
    request: RequestInterface,
    route: PaginatedRoute | R,
    ...args: RouteArguments<R>
  ): AsyncGenerator<Page<PageItem<R>>, void, undefined>;

  /** The items of every page, one at a time. */
  items<R extends string>(
    request: RequestInterface,
    route: PaginatedRoute | R,
    ...args: RouteArguments<R>
  ): AsyncGenerator<PageItem<R>, void, undefined>;

  /** Every item of every page, in one array. */
  all<R extends string>(
    request: RequestInterface,
    route: PaginatedRoute | R,
    ...args: RouteArguments<R>
  ): Promise<PageItem<R>[]>;
}

async function* pages(
  request: RequestInterface,
  route: string,
  params: LooseRequestParameters = {},
): AsyncGenerator<Page<unknown>, void, undefined> {
  let cursor = typeof params.cursor === "string" ? params.cursor : undefined;
  const seen = new Set<string>();
  for (;;) {
    const { data } = await request(route, { ...params, cursor });
    if (!isPage(data)) {
      throw new ParleyError(`${route} did not answer a list of the form {items, nextCursor}`);
    }
    yield data;
    if (data.nextCursor === null) return;
    // A server that hands out a cursor twice would loop for ever.
    if (seen.has(data.nextCursor)) throw new ParleyError(`${route} repeated a cursor`);
    seen.add(data.nextCursor);
    cursor = data.nextCursor;
  }
}

async function* items(
  request: RequestInterface,
  route: string,
  params?: LooseRequestParameters,
): AsyncGenerator<unknown, void, undefined> {
  for await (const page of pages(request, route, params)) yield* page.items;
}

async function all(
  request: RequestInterface,
  route: string,
  params?: LooseRequestParameters,
): Promise<unknown[]> {
  const result: unknown[] = [];
  for await (const page of pages(request, route, params)) result.push(...page.items);
  return result;
}

function isPage(value: unknown): value is Page<unknown> {
  if (typeof value !== "object" || value === null) return false;
  const page = value as Record<string, unknown>;
  return (
    Array.isArray(page.items) && (page.nextCursor === null || typeof page.nextCursor === "string")
  );
}

/** Walks a cursor-paginated list: pages, items, or all items at once. */
export const paginate = Object.assign(pages, { items, all }) as unknown as PaginateInterface;
