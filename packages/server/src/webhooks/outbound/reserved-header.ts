/** Headers Parley sets itself (W3C trace context: `traceContext`). */
const PARLEY_HEADERS = new Set(["content-type", "user-agent", "traceparent", "tracestate"]);
/**
 * Headers that belong to one HTTP hop or frame the request (RFC 9110 section 7.6.1, plus `host`,
 * `content-length` and `expect`), set by the HTTP client: sent by hand they break every attempt
 * (`expect`, `upgrade`, `keep-alive`) or the framing.
 */
const HOP_BY_HOP_HEADERS = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "expect",
  "host",
  "content-length",
]);
/** Credentials meant for a proxy or a browser session, never for a receiver's API. */
const CREDENTIAL_HEADERS = new Set(["proxy-authorization", "cookie"]);
/** Standard Webhooks' and Parley's signature headers; CloudEvents' binary-mode attributes. */
const RESERVED_PREFIXES = ["x-webhook-", "webhook-", "ce-"];

/**
 * Why an endpoint cannot have a custom header of this (lower-cased) name, or undefined when it
 * can. The admin API refuses such headers; the dispatcher leaves out any stored before a name was
 * reserved.
 */
export function whyHeaderIsReserved(name: string): string | undefined {
  if (PARLEY_HEADERS.has(name) || RESERVED_PREFIXES.some((prefix) => name.startsWith(prefix)))
    return "is set by Parley and cannot be overridden";
  if (HOP_BY_HOP_HEADERS.has(name)) return "is a hop-by-hop or framing header, set by HTTP itself";
  if (CREDENTIAL_HEADERS.has(name))
    return "is a proxy or browser credential, not for a webhook receiver (use Authorization)";
  return undefined;
}
