/** Header values as callers pass them. `undefined` is dropped; `null` overrides a default and then sends nothing. */
export type RequestHeaderValue = string | number | boolean | null | undefined;

/** A header value in the result: the value as given (a number stays a number). */
export type HeaderValue = NonNullable<RequestHeaderValue>;

export interface RequestHeaders {
  accept?: RequestHeaderValue;
  "user-agent"?: RequestHeaderValue;
  authorization?: RequestHeaderValue;
  "content-type"?: RequestHeaderValue;
  [header: string]: RequestHeaderValue;
}

export interface MediaType {
  /** Media type parameter such as `raw`, `diff` or `text+json`; amends vendor entries of `accept`. */
  format?: string;
  /** Preview names such as `mercy`; a trailing `-preview` is stripped. */
  previews?: readonly string[];
}

/** Caller meta information (for example `fetch`, `signal`, `timeout`), returned as passed. */
export interface RequestRequestOptions {
  [option: string]: unknown;
}

/** What `endpoint()`, `.defaults()` and `.merge()` accept. */
export interface EndpointOptions {
  /** HTTP method, any case. */
  method?: string;
  /** Path or absolute url: an RFC 6570 template, plus `:name` path-segment placeholders. */
  url?: string;
  baseUrl?: string;
  headers?: RequestHeaders;
  mediaType?: MediaType;
  /** The request body, used unchanged instead of a JSON body built from other parameters. */
  data?: unknown;
  request?: RequestRequestOptions;
  /** Any other key fills a url placeholder, or becomes a query parameter or a JSON body key. */
  [parameter: string]: unknown;
}

/** Merged options: what `.merge()` returns, `.parse()` takes and `DEFAULTS` holds. */
export interface EndpointDefaults extends EndpointOptions {
  method: string;
  baseUrl: string;
  headers: RequestHeaders;
  mediaType: { format: string; previews: string[] };
}

/** What `endpoint()` returns: generic request options for any HTTP client. */
export interface RequestOptions {
  /** Always lowercase. */
  method: string;
  url: string;
  /** Names always lowercase; values as given (`null` and `undefined` ones left out). */
  headers: Record<string, HeaderValue>;
  /** Present only when there is a body (PATCH, POST, PUT, DELETE). */
  body?: unknown;
  /** Present only when a `request` option was given. */
  request?: RequestRequestOptions;
}

/** Later keys win; how `.defaults()` layers the types of the parameters it adds. */
export type Layered<Earlier, Later> = Omit<Earlier, keyof Later> & Later;

/** The `endpoint` function; `D` carries the parameter types added through `.defaults()`. */
export interface EndpointInterface<D extends object = object> {
  (options: EndpointOptions): RequestOptions;
  (route: string, options?: EndpointOptions): RequestOptions;

  /** The defaults in effect, frozen. */
  readonly DEFAULTS: Readonly<EndpointDefaults & D>;

  /** A new endpoint function with `newDefaults` layered over this one's defaults. */
  defaults<O extends EndpointOptions>(newDefaults: O): EndpointInterface<Layered<D, O>>;

  /** Defaults merged with the call's options, url placeholders kept. */
  merge(options: EndpointOptions): EndpointDefaults & D;
  merge(route: string, options?: EndpointOptions): EndpointDefaults & D;

  /** Stateless: merged options (usually from `.merge()`) to request options. */
  parse(options: EndpointOptions): RequestOptions;
}
