import type { RequestOptions } from "@parley/endpoint";
import type { ProblemDetails } from "../types/api.js";
import type { ParleyResponse } from "../types/request.js";
import { isProblemDetails } from "../util/is-problem-details.js";
import { ParleyError } from "./parley-error.js";

/**
 * Parley answered with a status that is not 2xx. `code` and `problem` come from the RFC 9457
 * problem details Parley answers errors with; `request` is a copy of what was sent with
 * credentials redacted (see `redactRequest`), so the error can be logged as a whole.
 */
export class RequestError extends ParleyError {
  override name = "RequestError";
  readonly status: number;
  /** The problem's stable code, e.g. `invalid_secret`; undefined when the body is no problem. */
  readonly code: string | undefined;
  readonly problem: ProblemDetails | undefined;
  /** The request as sent, authorization header and other credentials redacted. */
  readonly request: RequestOptions;
  readonly response: ParleyResponse<unknown>;

  constructor(request: RequestOptions, response: ParleyResponse<unknown>) {
    const problem = isProblemDetails(response.data) ? response.data : undefined;
    const reason =
      problem === undefined
        ? `${response.status}`
        : `${response.status} ${problem.code}: ${problem.detail ?? problem.title}`;
    super(`${request.method.toUpperCase()} ${request.url} answered ${reason}`);
    this.status = response.status;
    this.code = problem?.code;
    this.problem = problem;
    this.request = request;
    this.response = response;
  }
}
