import { BoundedCache } from "./bounded-cache.js";
import { amendAcceptHeader, mergeMediaType } from "./media-type.js";
import { mergeHeaders, mergeRequest, normalizeHeaders } from "./merge-fields.js";
import { ownValue, setOwn } from "./objects.js";
import {
  appendQuery,
  formatQueryParameter,
  isAbsoluteUrl,
  joinBaseUrl,
  type Route,
} from "./route.js";
import type { EndpointDefaults, RequestOptions, RequestRequestOptions } from "./types.js";
import { parseUrlTemplate, type UrlTemplate } from "./url-template.js";

/** Option keys that are never url variables, query parameters or body keys. */
const OPTION_KEYS: ReadonlySet<string> = new Set([
  "method",
  "baseUrl",
  "url",
  "headers",
  "mediaType",
  "request",
]);

/** Only these methods carry a body; the rest send their parameters in the query string. */
const BODY_METHODS: ReadonlySet<string> = new Set(["patch", "post", "put", "delete"]);

const LOWERCASE_METHODS: ReadonlySet<string> = new Set(BODY_METHODS).add("get").add("head");

const NONE: Record<string, unknown> = Object.freeze({});

/** What buildRequest needs to know about a url, worked out once per url. */
interface UrlPlan {
  readonly template: UrlTemplate;
  /** Keys that are neither query parameters nor body keys: option keys and placeholders. */
  readonly consumed: ReadonlySet<string>;
  /** Whether a placeholder is named like an option key (`{url}`), which must not expand. */
  readonly namesOptionKey: boolean;
  /** Whether every expansion is an absolute url (true), a relative one (false), or it depends. */
  readonly absolute: boolean | undefined;
}

const plans = new BoundedCache<UrlPlan>(1000);

/** The plan for a url, cached: expanded urls are then never re-scanned for their shape. */
function planUrl(url: string): UrlPlan {
  return plans.get(url) ?? plans.set(url, makePlan(url));
}

function makePlan(url: string): UrlPlan {
  const template = parseUrlTemplate(url);
  const names = [...template.variableNames];
  const prefix = template.literalPrefix;
  return {
    template,
    consumed: new Set([...OPTION_KEYS, ...names]),
    namesOptionKey: names.some((name) => OPTION_KEYS.has(name)),
    absolute: isAbsoluteUrl(prefix) ? true : prefix.startsWith("/") ? false : undefined,
  };
}

/**
 * Request options from a call's options laid over `defaults` by the rules of `mergeOptions()`,
 * read in place instead of from a merged copy: `buildRequest(d, route, o)` equals
 * `buildRequest(null, undefined, mergeOptions(d, route, o))`, which is what `parse()` computes.
 *
 * Each remaining key fills a url placeholder when the url names it; otherwise it goes to the
 * query string (methods without a body) or to the JSON body. `data`, when present, is the body
 * as it is. Builds fresh `headers` and `body`; never writes to its inputs.
 */
export function buildRequest(
  defaults: EndpointDefaults | null,
  route: Route | undefined,
  options: unknown,
): RequestOptions {
  const given = typeof options === "object" && options !== null ? options : NONE;
  const base: Record<string, unknown> = defaults ?? NONE;
  // The call's own, defined value, else the route's, else the defaults'.
  const pick = (key: string, fromRoute?: unknown): unknown => {
    const value = ownValue(given, key);
    return value !== undefined ? value : fromRoute !== undefined ? fromRoute : ownValue(base, key);
  };

  const method = lowercase(pick("method", route?.[0]) ?? "get");
  const rawUrl = pick("url", route?.[1]) ?? "/";
  const plan = planUrl(typeof rawUrl === "string" ? rawUrl : String(rawUrl));
  const { template, consumed } = plan;

  const merged = mergeHeaders(base.headers, ownValue(given, "headers"));
  const headers = normalizeHeaders(merged);
  const mediaType = mergeMediaType(base.mediaType, ownValue(given, "mediaType"));
  const format = typeof mediaType.format === "string" ? mediaType.format : "";
  const previews = mediaType.previews as readonly string[];
  const accept = headers.accept;
  if (accept !== undefined && (format !== "" || previews.length > 0)) {
    headers.accept = amendAcceptHeader(
      typeof accept === "string" ? accept : String(accept),
      format,
      previews,
    );
  }

  const path = plan.namesOptionKey
    ? template.expand(parameters(base, given))
    : template.expand(given, base);
  let url = (plan.absolute ?? isAbsoluteUrl(path)) ? path : joinBaseUrl(pick("baseUrl"), path);

  let body: unknown;
  let query = "";
  const hasBody = BODY_METHODS.has(method);
  const data = consumed.has("data") ? undefined : pick("data");
  if (hasBody && data !== undefined) {
    body = data;
  } else {
    let fields: Record<string, unknown> | undefined;
    // Merge order: the defaults' keys first (with the call's values), then the call's new keys.
    const add = (key: string, value: unknown): void => {
      if (value === undefined) return;
      if (hasBody) {
        setOwn((fields ??= {}), key, value);
      } else {
        const parameter = formatQueryParameter(key, value);
        if (parameter !== undefined) query = query === "" ? parameter : `${query}&${parameter}`;
      }
    };
    if (base !== NONE) {
      for (const key of Object.keys(base)) {
        if (!consumed.has(key)) add(key, pick(key));
      }
    }
    for (const key of Object.keys(given)) {
      if (!consumed.has(key) && !Object.hasOwn(base, key))
        add(key, (given as Record<string, unknown>)[key]);
    }
    body = fields;
  }
  if (query !== "") {
    url = template.mayContainQueryOrFragment ? appendQuery(url, query) : `${url}?${query}`;
  }

  // An explicit null content-type means "send none", so only a missing one gets the JSON default.
  if (
    body !== undefined &&
    headers["content-type"] === undefined &&
    merged["content-type"] !== null
  ) {
    headers["content-type"] = "application/json; charset=utf-8";
  }

  // One literal per shape: cheaper than adding keys to a built object.
  const request = mergeRequest(base.request, ownValue(given, "request")) as
    RequestRequestOptions | undefined;
  if (body === undefined) {
    return request === undefined ? { method, url, headers } : { method, url, headers, request };
  }
  return request === undefined
    ? { method, url, headers, body }
    : { method, url, headers, body, request };
}

/** Merged methods are lowercase already; recognizing them is cheaper than lowercasing again. */
function lowercase(method: unknown): string {
  return typeof method === "string" && LOWERCASE_METHODS.has(method)
    ? method
    : String(method).toLowerCase();
}

/** The layered parameters without option keys, for a url that names one (`{url}`, rare). */
function parameters(base: object, given: object): object {
  const variables: Record<string, unknown> = {};
  for (const layer of [base, given]) {
    for (const key of Object.keys(layer)) {
      const value = (layer as Record<string, unknown>)[key];
      if (!OPTION_KEYS.has(key) && value !== undefined) setOwn(variables, key, value);
    }
  }
  return variables;
}
