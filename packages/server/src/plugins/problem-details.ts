import type { FastifyError, FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { AppError } from "../errors/app-error.js";
import { toProblem } from "../errors/problem-details.js";

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Turns a schema failure into one AppError naming the field and the reason. */
function validationError(error: FastifyError): AppError {
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

function toAppError(error: FastifyError): AppError | undefined {
  if (error instanceof AppError) return error;
  if (error.validation) return validationError(error);
  switch (error.code) {
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
      return new AppError("validation_failed", "Content-Length does not match the body");
  }
  if (error instanceof SyntaxError && error.statusCode === 400)
    return new AppError("invalid_json", error.message);
  return undefined;
}

/** RFC 9457 problem details for every error, with stable `code`s, including unknown routes. */
export const problemDetails = fp(async function problemDetails(app: FastifyInstance) {
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const known = toAppError(error);
    if (!known && (error.statusCode ?? 500) >= 500)
      request.log.error({ err: error }, "request failed");
    const appError =
      known ??
      (error.statusCode === 429
        ? new AppError("rate_limited", error.message)
        : error.statusCode && error.statusCode < 500
          ? new AppError("validation_failed", error.message)
          : new AppError("internal_error", "something went wrong; the error was logged"));
    for (const [name, value] of Object.entries(appError.headers)) reply.header(name, value);
    return reply.code(appError.status).type("application/problem+json").send(toProblem(appError));
  });

  app.setNotFoundHandler(async (request, reply) => {
    const problem = toProblem(
      new AppError("route_not_found", `no route ${request.method} ${request.url.split("?")[0]}`),
    );
    return reply.code(404).type("application/problem+json").send(problem);
  });
});
