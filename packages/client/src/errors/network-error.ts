import type { RequestOptions } from "@parley/endpoint";
import { ParleyError } from "./parley-error.js";

/**
 * No answer came: connection refused, DNS failure, reset, TLS failure. The error `fetch` threw is
 * kept as `cause`; its reason (such as `ECONNREFUSED`) is also in the message.
 */
export class NetworkError extends ParleyError {
  override name = "NetworkError";
  /** The request as it was to be sent, credentials redacted. */
  readonly request: RequestOptions;

  constructor(request: RequestOptions, cause: unknown, reason = describeCause(cause)) {
    super(`${request.method.toUpperCase()} ${request.url} failed: ${reason}`, { cause });
    this.request = request;
  }
}

/** "fetch failed (ECONNREFUSED)": undici hides the useful part in `cause.code` or `cause.message`. */
function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const inner = (cause as { cause?: unknown }).cause;
  if (typeof inner !== "object" || inner === null) return cause.message;
  const code = (inner as { code?: unknown }).code;
  const detail = typeof code === "string" ? code : (inner as { message?: unknown }).message;
  return typeof detail === "string" && detail !== ""
    ? `${cause.message} (${detail})`
    : cause.message;
}
