import type { FastifyError } from "fastify";
import { databaseFailureOf } from "../db/database-errors.js";
import { AppError } from "../errors/app-error.js";

/** Seconds a client is asked to wait (Retry-After) before sending again to a busy database. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/** A schema failure: Fastify's error, or the one a route with `attachValidation` is handed. */
interface SchemaFailure {
  message: string;
  validation?: unknown;
  validationContext?: string | undefined;
}

/** Turns a schema failure into one AppError naming the field and the reason. */
function validationAppError(error: SchemaFailure): AppError {
  const first = (error.validation as AjvError[] | undefined)?.[0];
  const where = error.validationContext ?? "body";
  if (!first) return new AppError("validation_failed", error.message);
  const field = [where, ...first.instancePath.split("/").filter(Boolean)].join(".");
  if (first.keyword === "additionalProperties") {
    const extra = String(first.params.additionalProperty);
    return new AppError("unknown_field", `${field}.${extra} is not a field of this request`, {
      field: `${field}.${extra}`,
    });
  }
  if (first.keyword === "required") {
    const missing = String(first.params.missingProperty);
    return new AppError("validation_failed", `${field}.${missing} is required`, {
      field: `${field}.${missing}`,
    });
  }
  return new AppError("validation_failed", `${field} ${first.message ?? "is invalid"}`, { field });
}

/**
 * The one mapping from whatever a request failed with to an error code: Parley's own AppErrors as
 * they are, schema failures, and the errors Fastify and its plugins raise, each by its code. A 4xx
 * nobody listed keeps its status as `bad_request` (never a guess such as validation_failed); a
 * database that is unavailable or out of space answers `database_unavailable` (503, Retry-After)
 * or `insufficient_storage` (507); anything else is an `internal_error`. The caller logs 5xx.
 */
export function toAppError(error: FastifyError | Error): AppError {
  if (error instanceof AppError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) return validationAppError(fastifyError);
  switch (fastifyError.code) {
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new AppError("unsupported_media_type", "send the body as application/json");
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new AppError("invalid_json", error.message);
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new AppError(
        "body_too_large",
        "the request body is larger than this endpoint accepts",
      );
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return new AppError("bad_request", "Content-Length does not match the body");
    case "FST_ERR_BAD_URL":
      return new AppError("bad_request", "the URL is not valid percent-encoded UTF-8");
    case "FST_ERR_MAX_PARAM_LENGTH":
      return new AppError("bad_request", "a path segment is too long", {}, {}, 414);
  }
  const status = fastifyError.statusCode ?? 500;
  if (error instanceof SyntaxError && status === 400)
    return new AppError("invalid_json", error.message);
  switch (status) {
    case 404:
      return new AppError("not_found", error.message);
    case 413:
      return new AppError(
        "body_too_large",
        "the request body is larger than this endpoint accepts",
      );
    case 415:
      return new AppError("unsupported_media_type", error.message);
    case 429:
      return new AppError("rate_limited", error.message);
  }
  if (status >= 400 && status < 500)
    return new AppError("bad_request", error.message, {}, {}, status);
  switch (databaseFailureOf(error)) {
    case "unavailable":
      return new AppError(
        "database_unavailable",
        `the database did not answer in time; retry in ${DATABASE_RETRY_AFTER_SECONDS} seconds`,
        {},
        { "Retry-After": String(DATABASE_RETRY_AFTER_SECONDS) },
      );
    case "storage_full":
      return new AppError(
        "insufficient_storage",
        "the disk holding the database is full; the request was not stored",
      );
  }
  return new AppError("internal_error", "something went wrong; the error was logged");
}
