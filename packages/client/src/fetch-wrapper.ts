import type { RequestOptions } from "@parley/endpoint";
import { NetworkError } from "./errors/network-error.js";
import { RequestError } from "./errors/request-error.js";
import { TimeoutError } from "./errors/timeout-error.js";
import { getResponseData } from "./get-response-data.js";
import type { ClientRequestOptions, FetchLike, ParleyResponse } from "./types/request.js";
import { redactRequest, redactUrl } from "./util/redact.js";

/** Sends request options built by `endpoint` and turns the answer into a response or an error. */
export async function fetchWrapper(options: RequestOptions): Promise<ParleyResponse<unknown>> {
  const meta: ClientRequestOptions = options.request ?? {};
  const fetchImpl: FetchLike = meta.fetch ?? globalThis.fetch;
  // endpoint() keeps header values as given (a number stays a number); fetch takes strings.
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers)) headers[name] = String(value);
  const body = encodeBody(options.body, headers);

  const timeoutSignal = meta.timeout === undefined ? undefined : AbortSignal.timeout(meta.timeout);
  const signals = [meta.signal, timeoutSignal].filter((s) => s !== undefined);
  const init: RequestInit & { duplex?: "half" } = {
    // fetch upper-cases only some methods; PATCH must be sent as written.
    method: options.method.toUpperCase(),
    headers,
    redirect: "follow",
  };
  if (body !== undefined) init.body = body;
  if (body instanceof ReadableStream) init.duplex = "half";
  if (signals.length > 0)
    init.signal = signals.length === 1 ? signals[0] : AbortSignal.any(signals);

  let response: Response;
  let data: unknown;
  try {
    response = await fetchImpl(options.url, init);
    data = await getResponseData(response);
  } catch (error) {
    if (meta.signal?.aborted) throw meta.signal.reason;
    if (timeoutSignal?.aborted)
      throw new TimeoutError(redactRequest(options), meta.timeout!, error);
    throw new NetworkError(redactRequest(options), error);
  }

  const result: ParleyResponse<unknown> = {
    status: response.status,
    url: redactUrl(response.url === "" ? options.url : response.url),
    headers: Object.fromEntries(response.headers),
    data,
  };
  if (response.status < 200 || response.status >= 300) {
    throw new RequestError(redactRequest(options), result);
  }
  return result;
}

/**
 * Plain objects and arrays are sent as JSON; strings, bytes, Blobs, FormData, URLSearchParams and
 * streams as they are. For FormData and URLSearchParams the JSON content-type `endpoint` adds to
 * any body is dropped, so fetch sets the right one (with the multipart boundary).
 */
function encodeBody(
  body: unknown,
  headers: Record<string, string>,
): NonNullable<RequestInit["body"]> | undefined {
  if (body === undefined) return undefined;
  if (
    typeof body === "string" ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    body instanceof Blob ||
    body instanceof ReadableStream
  ) {
    return body as NonNullable<RequestInit["body"]>;
  }
  if (body instanceof FormData || body instanceof URLSearchParams) {
    if (headers["content-type"]?.startsWith("application/json")) delete headers["content-type"];
    return body;
  }
  return JSON.stringify(body);
}
