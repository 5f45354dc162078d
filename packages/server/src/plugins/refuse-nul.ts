import type { FastifyInstance, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { NUL, nulCharacterError } from "../chat/content-rules.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * false: this route checks NUL itself (the public ingest routes, whose third-party payloads
     * go through the content rules field by field and whose unused fields are ignored).
     */
    nulGuard?: boolean;
  }
}

/**
 * Where the first U+0000 is in a parsed value, as a field path (`body.events.0`), or undefined.
 * Walks with its own stack: a body of 1 MiB can nest a hundred thousand levels deep.
 */
export function findNul(value: unknown, root: string): string | undefined {
  const stack: Array<[unknown, string]> = [[value, root]];
  while (stack.length > 0) {
    const [current, path] = stack.pop()!;
    if (typeof current === "string") {
      if (current.includes(NUL)) return path;
    } else if (typeof current === "object" && current !== null) {
      for (const [key, child] of Object.entries(current)) {
        if (key.includes(NUL)) return path;
        stack.push([child, `${path}.${key}`]);
      }
    }
  }
  return undefined;
}

/**
 * One guard for every text field that could reach the database: a U+0000 anywhere in the path
 * parameters, the query string or a parsed body answers 400 validation_failed naming the field, on
 * SQLite as on PostgreSQL (whose text type cannot hold it). It runs before schema validation, so
 * no route needs a pattern of its own. Multipart parts are read by their route, which reduces file
 * names and types to safe forms.
 */
export const refuseNul = fp(async function refuseNul(app: FastifyInstance) {
  app.addHook("preValidation", async (request: FastifyRequest) => {
    // An unknown route answers route_not_found whatever the request holds.
    if (request.is404 || request.routeOptions.config.nulGuard === false) return;
    const field =
      findNul(request.params, "params") ??
      findNul(request.query, "querystring") ??
      findNul(request.body, "body");
    if (field !== undefined) throw nulCharacterError(field);
  });
});
