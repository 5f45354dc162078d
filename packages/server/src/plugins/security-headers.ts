import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import helmet, { type HelmetOptions } from "helmet";

/**
 * Every answer: nosniff, no framing, no referrer, and a CSP that allows nothing (an API answer is
 * data, never a page). The docs and the admin UI set the policies their pages need.
 */
export const securityHeaders = fp(async function securityHeaders(app: FastifyInstance) {
  const headers = helmetHeaders({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        formAction: ["'none'"],
      },
    },
    frameguard: { action: "deny" },
    referrerPolicy: { policy: "no-referrer" },
    // Parley does not decide for the operator's proxy whether it is reached over HTTPS only.
    hsts: false,
  });
  app.addHook("onRequest", (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
});

/**
 * The headers helmet sets for `options`, worked out once. They are the same for every answer, and
 * @fastify/helmet built helmet's middleware (parsing the CSP directives) anew for every request:
 * about 5% of an ingest request's CPU time.
 */
function helmetHeaders(options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader(name: string, value: string | number) {
      headers[name.toLowerCase()] = String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  helmet(options)(
    {} as IncomingMessage,
    response as unknown as ServerResponse,
    (error?: unknown) => {
      if (error) throw error;
    },
  );
  return headers;
}
