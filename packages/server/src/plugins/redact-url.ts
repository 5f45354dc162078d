import path from "node:path";
import type { FastifyServerOptions } from "fastify";
import type { Config } from "../config/load-config.js";

/**
 * What the request log shows of a URL. Public URLs carry their credential in the path (ingest
 * tokens), and a misspelled one (`/api/public/Webhooks/ingest/<token>`, `ingest%2F<token>`)
 * carries it just the same: every segment under /api/public/ is hidden, however the path is
 * spelled, encoded or padded.
 */
export function redactUrl(url: string): string {
  const pathPart = url.split(/[?#]/, 1)[0]!;
  let decoded = pathPart;
  try {
    decoded = decodeURIComponent(pathPart);
  } catch {
    // A malformed escape: judge the path as it was sent.
  }
  const normalised = path.posix.normalize(decoded.replace(/\\/g, "/")).toLowerCase();
  return normalised.startsWith("/api/public") ? "/api/public/[redacted]" : url;
}

/**
 * The log at the configured level, written to `stream` (operations/log-stream.ts; unset: standard
 * output), credentials left out: the Authorization header is redacted, and each request's URL
 * goes through redactUrl().
 */
export function redactedLogger(
  level: Config["logLevel"],
  stream?: NodeJS.WritableStream,
): FastifyServerOptions["logger"] {
  return {
    level,
    ...(stream ? { stream } : {}),
    redact: ["req.headers.authorization"],
    serializers: {
      req: (req: { method: string; url: string; ip?: string }) => ({
        method: req.method,
        url: redactUrl(req.url),
        remoteAddress: req.ip,
      }),
    },
  };
}
