import type {
  EndpointInterface,
  EndpointOptions,
  Layered,
  MediaType,
  RequestHeaders,
} from "@parley/endpoint";
import type { Route, Routes } from "./routes.js";

/** A `fetch` implementation: the global one, undici's, or a test double. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** The `request` option: how the call is made, never sent to the server. */
export interface ClientRequestOptions {
  /** Used instead of the global `fetch`. */
  fetch?: FetchLike;
  /** Aborts the call; the abort reason is thrown as it is. */
  signal?: AbortSignal;
  /** Milliseconds before the call fails with a `TimeoutError`. */
  timeout?: number;
  [option: string]: unknown;
}

/** Options every call accepts next to its route's parameters. */
export interface RequestParameters {
  baseUrl?: string;
  headers?: RequestHeaders;
  mediaType?: MediaType;
  request?: ClientRequestOptions;
}

/** Parameters of a route outside the route map: anything goes. */
export interface LooseRequestParameters extends RequestParameters {
  data?: unknown;
  [parameter: string]: unknown;
}

/** Response headers, names lowercased. */
export type ResponseHeaders = Record<string, string>;

export interface ParleyResponse<T> {
  status: number;
  /** The final url (after redirects), with an ingest token replaced by `[REDACTED]`. */
  url: string;
  headers: ResponseHeaders;
  /**
   * Parsed JSON; `undefined` for 204 and other empty answers; a string for `text/*`; an
   * `ArrayBuffer` for any other media type.
   */
  data: T;
}

/** The arguments after the route: required when the route has a required parameter. */
export type RouteArguments<R extends string> = R extends Route
  ? Record<never, never> extends Routes[R]["params"]
    ? [params?: Routes[R]["params"] & RequestParameters]
    : [params: Routes[R]["params"] & RequestParameters]
  : [params?: LooseRequestParameters];

/** The `data` of a successful answer to route `R`. */
export type RouteResponse<R extends string> = R extends Route ? Routes[R]["response"] : unknown;

/** The `request` function; `D` carries the parameter types added through `.defaults()`. */
export interface RequestInterface<D extends object = object> {
  /**
   * Sends `"<METHOD> <path>"` with `params` (url placeholders, then query or JSON body keys) and
   * resolves with the answer; rejects with `RequestError` for a non-2xx answer and `NetworkError`
   * when no answer came. Routes of the route map are type-checked.
   */
  <R extends string>(
    route: Route | R,
    ...args: RouteArguments<R>
  ): Promise<ParleyResponse<RouteResponse<R>>>;
  /** Options-only form: `request({ method: "GET", url: "/healthz" })`. */
  (options: EndpointOptions & { url: string }): Promise<ParleyResponse<unknown>>;

  /** A new request function with `options` layered over this one's defaults. */
  defaults<O extends EndpointOptions>(options: O): RequestInterface<Layered<D, O>>;

  /** The endpoint function with the same defaults: builds the request options without sending. */
  endpoint: EndpointInterface<D>;
}
