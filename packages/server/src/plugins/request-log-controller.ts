import { LogController, type FastifyReply, type FastifyRequest } from "fastify";

/**
 * Fastify's request log, one level down: each request's `incoming request` and `request
 * completed` lines (and a route not found) are logged at `debug` instead of `info`, so that at the
 * default level the log holds what an operator acts on (warnings, errors, readiness, the start)
 * rather than two lines per request. Failures keep their levels: a request that errored is logged
 * at `error` whatever the level, and 5xx answers by the problem-details handler as before.
 */
export class RequestLogController extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.debug({ req: request }, "incoming request");
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (this.isLogDisabled(request)) return;
    if (error) {
      reply.log.error(
        { res: reply, err: error, responseTime: reply.elapsedTime },
        "request errored",
      );
    } else {
      reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, "request completed");
    }
  }

  override routeNotFound(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.debug(`Route ${request.raw.method}:${request.raw.url} not found`);
  }
}
