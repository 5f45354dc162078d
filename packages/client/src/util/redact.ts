import type { RequestOptions } from "@parley/endpoint";

const REDACTED = "[REDACTED]";

/** Headers that carry credentials. */
const SECRET_HEADERS = new Set(["authorization", "proxy-authorization", "cookie"]);

/** Body keys that carry credentials: a webhook's signing secret. */
const SECRET_BODY_KEYS = new Set(["secret"]);

/** An ingest URL's token is its only credential: `/ingest/abc...` becomes `/ingest/[REDACTED]`. */
export function redactUrl(url: string): string {
  return url.replace(/(\/webhooks\/ingest\/)[^/?#]+/, `$1${REDACTED}`);
}

/**
 * A copy of `options` safe to keep in an error and to log: credential headers keep only their
 * scheme (`Bearer [REDACTED]`), an ingest token leaves the url, a webhook secret leaves the body.
 * The options themselves are not changed.
 */
export function redactRequest(options: RequestOptions): RequestOptions {
  const headers: RequestOptions["headers"] = {};
  for (const [name, value] of Object.entries(options.headers)) {
    headers[name] = SECRET_HEADERS.has(name) ? redactHeader(String(value)) : value;
  }
  const copy: RequestOptions = { ...options, url: redactUrl(options.url), headers };
  if (isRecord(options.body) && Object.keys(options.body).some((k) => SECRET_BODY_KEYS.has(k))) {
    const body: Record<string, unknown> = { ...options.body };
    for (const key of SECRET_BODY_KEYS) if (key in body) body[key] = REDACTED;
    copy.body = body;
  }
  return copy;
}

function redactHeader(value: string): string {
  const scheme = /^(\w+) /.exec(value);
  return scheme === null ? REDACTED : `${scheme[1]} ${REDACTED}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
