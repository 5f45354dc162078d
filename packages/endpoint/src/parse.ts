import type { EndpointDefaults, EndpointOptions, RequestOptions } from "./types.js";
import { parseUrlTemplate } from "./url-template.js";
import { amendAcceptHeader } from "./util/amend-accept-header.js";
import { appendQuery } from "./util/append-query.js";
import { formatQueryParameter } from "./util/format-query-parameter.js";
import { joinBaseUrl } from "./util/join-base-url.js";
import { normalizeHeaders } from "./util/normalize-headers.js";
import { setOwn } from "./util/set-own.js";

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
  const method = options.method == null ? "get" : String(options.method).toLowerCase();
  const template = parseUrlTemplate(options.url == null ? "/" : String(options.url));
  const placeholders = template.variableNames;

  const headers = normalizeHeaders(options.headers);
  const mediaType = options.mediaType as Partial<EndpointDefaults["mediaType"]> | undefined;
  if (typeof mediaType === "object" && mediaType !== null && headers.accept !== undefined) {
    const format = typeof mediaType.format === "string" ? mediaType.format : "";
    const previews = Array.isArray(mediaType.previews) ? mediaType.previews : [];
    if (format !== "" || previews.length > 0) {
      headers.accept = amendAcceptHeader(headers.accept, format, previews);
    }
  }

  let url = joinBaseUrl(options.baseUrl, template.expand(variablesOf(options, placeholders)));

  let body: unknown;
  let query = "";
  const hasBody = BODY_METHODS.has(method);
  if (hasBody && Object.hasOwn(options, "data") && !placeholders.has("data")) {
    body = options.data;
  } else {
    let fields: Record<string, unknown> | undefined;
    for (const key of Object.keys(options)) {
      if (OPTION_KEYS.has(key) || placeholders.has(key)) continue;
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
  if (query !== "") url = appendQuery(url, query);

  // An explicit null content-type means "send none", so only a missing one gets the JSON default.
  if (body !== undefined && headers["content-type"] === undefined) {
    if (options.headers?.["content-type"] !== null) {
      headers["content-type"] = "application/json; charset=utf-8";
    }
  }

  const result: RequestOptions = { method, url, headers };
  if (body !== undefined) result.body = body;
  if (options.request !== undefined) result.request = options.request;
  return result;
}

/** The options themselves, unless the url names an option key such as `{url}` (rare). */
function variablesOf(options: EndpointOptions, placeholders: ReadonlySet<string>): object {
  for (const name of placeholders) {
    if (OPTION_KEYS.has(name)) {
      const variables: Record<string, unknown> = {};
      for (const key of Object.keys(options)) {
        if (!OPTION_KEYS.has(key)) setOwn(variables, key, options[key]);
      }
      return variables;
    }
  }
  return options;
}
