import type { EndpointDefaults, EndpointOptions, RequestOptions } from "./types.js";
import { amendAcceptHeader } from "./util/amend-accept-header.js";
import { appendQuery } from "./util/append-query.js";
import { formatQueryParameter } from "./util/format-query-parameter.js";
import { isAbsoluteUrl } from "./util/is-absolute-url.js";
import { joinBaseUrl } from "./util/join-base-url.js";
import { normalizeHeaders } from "./util/normalize-headers.js";
import { setOwn } from "./util/set-own.js";
import { templatePlan } from "./util/template-plan.js";

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

/**
 * Merged options to request options. Each remaining key fills a url placeholder when the url
 * names it; otherwise it goes to the query string (methods without a body) or to the JSON body.
 * `data`, when present, is the body as it is. Stateless; builds fresh `headers` and `body`.
 */
export function parse(options: EndpointOptions): RequestOptions {
  const method =
    typeof options.method === "string"
      ? lowercase(options.method)
      : String(options.method ?? "get").toLowerCase();
  const url = typeof options.url === "string" ? options.url : String(options.url ?? "/");
  const { template, consumed, namesOptionKey, absolute } = templatePlan(url, OPTION_KEYS);

  const headers = normalizeHeaders(options.headers);
  const mediaType = options.mediaType as Partial<EndpointDefaults["mediaType"]> | undefined;
  if (typeof mediaType === "object" && mediaType !== null && headers.accept !== undefined) {
    const format = typeof mediaType.format === "string" ? mediaType.format : "";
    const previews = Array.isArray(mediaType.previews) ? mediaType.previews : [];
    if (format !== "" || previews.length > 0) {
      headers.accept = amendAcceptHeader(headers.accept, format, previews);
    }
  }

  const path = template.expand(namesOptionKey ? withoutOptionKeys(options) : options);
  let target = (absolute ?? isAbsoluteUrl(path)) ? path : joinBaseUrl(options.baseUrl, path);

  let body: unknown;
  let query = "";
  const hasBody = BODY_METHODS.has(method);
  if (hasBody && Object.hasOwn(options, "data") && !consumed.has("data")) {
    body = options.data;
  } else {
    let fields: Record<string, unknown> | undefined;
    for (const key of Object.keys(options)) {
      if (consumed.has(key)) continue;
      const value = options[key];
      if (value === undefined) continue;
      if (hasBody) {
        setOwn((fields ??= {}), key, value);
      } else {
        const parameter = formatQueryParameter(key, value);
        if (parameter !== undefined) query = query === "" ? parameter : `${query}&${parameter}`;
      }
    }
    body = fields;
  }
  if (query !== "") {
    target = template.mayContainQueryOrFragment ? appendQuery(target, query) : `${target}?${query}`;
  }

  // An explicit null content-type means "send none", so only a missing one gets the JSON default.
  if (body !== undefined && headers["content-type"] === undefined) {
    if (options.headers?.["content-type"] !== null) {
      headers["content-type"] = "application/json; charset=utf-8";
    }
  }

  // One literal per shape: cheaper than adding keys to a built object.
  const { request } = options;
  if (body === undefined) {
    return request === undefined
      ? { method, url: target, headers }
      : { method, url: target, headers, request };
  }
  return request === undefined
    ? { method, url: target, headers, body }
    : { method, url: target, headers, body, request };
}

const LOWERCASE_METHODS: ReadonlySet<string> = new Set([
  "get",
  "head",
  "post",
  "put",
  "patch",
  "delete",
  "options",
]);

/** Merged methods are lowercase already; recognizing them is cheaper than lowercasing again. */
function lowercase(method: string): string {
  return LOWERCASE_METHODS.has(method) ? method : method.toLowerCase();
}

/** The options without option keys, for a url that names one (`{url}`): they are not variables. */
function withoutOptionKeys(options: EndpointOptions): object {
  const variables: Record<string, unknown> = {};
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) setOwn(variables, key, options[key]);
  }
  return variables;
}
