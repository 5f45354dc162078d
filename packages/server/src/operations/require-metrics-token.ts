import crypto from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../errors/app-error.js";

const BEARER = { "WWW-Authenticate": 'Bearer realm="parley-metrics"' };

/** SHA-256 of a value: equal lengths, so the comparison below takes the same time for any input. */
const digest = (value: string): Buffer => crypto.createHash("sha256").update(value).digest();

/**
 * An onRequest hook that answers 401 unless the request carries `Authorization: Bearer <token>`
 * (PARLEY_METRICS_TOKEN). The comparison is in constant time: the digests of what was sent and of
 * the token, compared with timingSafeEqual, so the time taken tells nothing of how much matched.
 */
export function requireMetricsToken(
  token: string,
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const expected = digest(token);
  return async (request) => {
    const authorization = request.headers.authorization;
    if (authorization === undefined)
      throw new AppError("unauthorized", "/metrics needs its bearer token", {}, BEARER);
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match || !crypto.timingSafeEqual(digest(match[1]!), expected))
      throw new AppError(
        "unauthorized",
        "not the metrics token",
        {},
        {
          "WWW-Authenticate": `${BEARER["WWW-Authenticate"]}, error="invalid_token"`,
        },
      );
  };
}
