import type { RequestOptions } from "@parley/endpoint";
import { NetworkError } from "./network-error.js";

/** No answer within the `request.timeout` milliseconds. */
export class TimeoutError extends NetworkError {
  override name = "TimeoutError";
  readonly timeout: number;

  constructor(request: RequestOptions, timeout: number, cause: unknown) {
    super(request, cause, `no answer within ${timeout} ms`);
    this.timeout = timeout;
  }
}
