import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { AppError } from "../errors/app-error.js";

/**
 * JSON only: no text/plain fallback, so a non-JSON body answers 415 unsupported_media_type, and
 * a body that does not parse answers 400 invalid_json. An empty body is no body.
 */
export const jsonOnly = fp(async function jsonOnly(app: FastifyInstance) {
  app.removeContentTypeParser("text/plain");
  const jsonParser = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    if (body === "" || (typeof body === "string" && body.trim() === ""))
      return done(null, undefined);
    jsonParser(request, body as string, (error, value) => {
      if (error)
        return done(
          new AppError("invalid_json", `the body is not valid JSON: ${error.message}`),
          undefined,
        );
      done(null, value);
    });
  });
});
