import type { AppError } from "./app-error.js";

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  [extension: string]: unknown;
}

/** The `type` URI of a code: a stable, dereferenceable-looking identifier documented in docs/errors.md. */
export function problemType(code: string): string {
  return `https://parley.dev/errors/${code}`;
}

export function toProblem(error: AppError): ProblemDetails {
  return {
    type: problemType(error.code),
    title: error.title,
    status: error.status,
    detail: error.detail ?? error.title,
    code: error.code,
    ...error.extra,
  };
}
