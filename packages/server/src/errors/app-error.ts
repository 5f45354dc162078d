import { ERROR_CATALOGUE, type ErrorCode } from "./error-catalogue.js";

/**
 * A failure with a stable code from the catalogue. Domain services throw it; the HTTP layer turns
 * it into RFC 9457 problem details (`extra` fields are added to the problem object). The status is
 * the catalogue's, except where `bad_request` carries on a 4xx that Fastify or a plugin chose.
 */
export class AppError extends Error {
  readonly title: string;
  constructor(
    readonly code: ErrorCode,
    readonly detail?: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
    readonly status: number = ERROR_CATALOGUE[code].status,
  ) {
    super(detail ?? ERROR_CATALOGUE[code].title);
    this.name = "AppError";
    this.title = ERROR_CATALOGUE[code].title;
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
