import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { rollbackFailureOf } from "../db/database-errors.js";
import { AppError } from "../errors/app-error.js";
import { toProblem } from "../errors/problem-details.js";
import { toAppError } from "./to-app-error.js";

function sendProblem(reply: FastifyReply, appError: AppError): FastifyReply {
  for (const [name, value] of Object.entries(appError.headers)) reply.header(name, value);
  return reply.code(appError.status).type("application/problem+json").send(toProblem(appError));
}

/**
 * Logs a failure that was not the client's doing: an internal error, and any 5xx mapped from
 * another error (a database that is unavailable or full), with that error, the real cause, as
 * `err`, and the ROLLBACK that failed after it, if one did, as `rollbackErr`. A 5xx thrown on
 * purpose as an AppError (a readiness answer) is not logged here.
 */
export function logServerFault(
  error: FastifyError | Error,
  appError: AppError,
  request: FastifyRequest,
): void {
  if (appError.code !== "internal_error" && (appError.status < 500 || appError === error)) return;
  const rollbackErr = rollbackFailureOf(error);
  const fields =
    rollbackErr === undefined ? { err: error } : { err: error, rollbackErr: String(rollbackErr) };
  if (appError.code === "database_unavailable") request.log.warn(fields, "request failed");
  else request.log.error(fields, "request failed");
}

/** Maps an error with toAppError(), logs it when it was not the client's doing, answers it. */
export function answerError(
  error: FastifyError | Error,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const appError = toAppError(error);
  logServerFault(error, appError, request);
  return sendProblem(reply, appError);
}

/**
 * For Fastify's `frameworkErrors` option: a URL that is not valid percent-encoding, or a path
 * segment over the length limit, is refused before any route is found; answer it as problem
 * details too.
 */
export function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  void answerError(error, request, reply);
}

/** RFC 9457 problem details for every error, with stable `code`s, including unknown routes. */
export const problemDetails = fp(async function problemDetails(app: FastifyInstance) {
  app.setErrorHandler(async (error: FastifyError, request, reply) =>
    answerError(error, request, reply),
  );

  app.setNotFoundHandler(async (request, reply) =>
    sendProblem(
      reply,
      new AppError("route_not_found", `no route ${request.method} ${request.url.split("?")[0]}`),
    ),
  );
});
