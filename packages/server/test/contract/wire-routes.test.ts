/**
 * The server registers the wire schemas of WIRE_ROUTES, route by route, as it adds its routes
 * (buildApp's onRoute). With wire-types.test-d.ts (the client's route map is those schemas' static
 * types) this pins the client's types to what the server validates and answers.
 */
import type { TSchema } from "@sinclair/typebox";
import type { RouteOptions } from "fastify";
import { beforeAll, describe, expect, it } from "vitest";
import {
  CONTENT_FORMATS as WIRE_CONTENT_FORMATS,
  MAX_CONTENT_BYTES as WIRE_MAX_CONTENT_BYTES,
} from "@parley/client/wire";
import { CONTENT_FORMATS, MAX_CONTENT_BYTES } from "../../src/chat/content-rules.js";
import { createTestApp } from "../helpers/build-app.js";
import { SQLITE } from "../helpers/dialects.js";
import { WIRE_ROUTES, type WireRoute } from "./wire-routes.js";

interface RouteSchema {
  params?: object;
  querystring?: object;
  body?: object;
  response?: Record<string, unknown>;
}

/** A schema as JSON: what Ajv, the serializer and OpenAPI see (TypeBox's symbol keys are not). */
const json = (schema: unknown) => JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;

describe("the server's routes and the wire schemas", () => {
  /** Each API route's schema as it was added, keyed `"POST /api/rooms/{roomId}/join"`. */
  const registered = new Map<string, RouteSchema>();

  beforeAll(async () => {
    const t = await createTestApp(
      SQLITE,
      {},
      {
        onRoute: (route: RouteOptions) => {
          // The live stream is a WebSocket, not a JSON route: docs/realtime.md is its contract.
          if (!route.url.startsWith("/api/") || (route as { websocket?: boolean }).websocket)
            return;
          // Single sign-on's start and callback are browser navigations that answer redirects.
          if ((route.schema?.response as Record<string, unknown> | undefined)?.[302]) return;
          const path = route.url.replace(/:(\w+)/g, "{$1}");
          for (const method of [route.method].flat()) {
            if (method !== "HEAD") registered.set(`${method} ${path}`, route.schema as RouteSchema);
          }
        },
      },
    );
    await t.close();
  });

  it("has a wire entry for every API route it serves, and serves every entry", () => {
    expect([...registered.keys()].sort()).toEqual(Object.keys(WIRE_ROUTES).sort());
  });

  it.each(Object.entries(WIRE_ROUTES) as [string, WireRoute][])(
    "%s validates and answers with its wire schemas",
    (route, wire) => {
      const schema = registered.get(route)!;
      const expectPart = (part: unknown, wirePart: TSchema | undefined) =>
        wirePart ? expect(json(part)).toEqual(json(wirePart)) : expect(part).toBeUndefined();

      expectPart(schema.params, wire.params);
      expectPart(schema.querystring, wire.querystring);
      if (wire.body === "multipart")
        expect(schema.body).toHaveProperty(["content", "multipart/form-data"]);
      else expectPart(schema.body, wire.body);

      const answer = schema.response?.[wire.status];
      if (wire.status === 204) expect(answer).toEqual({ type: "null" });
      else if (wire.response === "text") expect(answer).toHaveProperty(["content", "text/plain"]);
      else if (wire.response === "binary")
        expect(answer).toHaveProperty(["content", "application/octet-stream"]);
      else {
        // A route may add response headers to document (X-Parley-Media-Type); the body is the wire's.
        const { headers: _headers, ...body } = json(answer);
        expect(body).toEqual(json(wire.response));
      }
    },
  );

  it("documents the limits the server's content rules apply", () => {
    expect(WIRE_MAX_CONTENT_BYTES).toBe(MAX_CONTENT_BYTES);
    expect([...WIRE_CONTENT_FORMATS]).toEqual([...CONTENT_FORMATS]);
  });
});
