import type { FastifyInstance } from "fastify";

/** One operation of the OpenAPI document the app serves. */
export interface ApiRoute {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** OpenAPI form, e.g. /api/rooms/{roomId}/messages. */
  path: string;
  /** The route's parameters and body, as the OpenAPI document describes them. */
  operation: {
    parameters?: { in: string; name: string; schema?: Record<string, unknown> }[];
    requestBody?: { content?: Record<string, { schema?: Record<string, unknown> }> };
    security?: unknown[];
  };
}

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** Every documented route of the app (hidden ones, such as the UI's assets, are left out). */
export function apiRoutes(app: FastifyInstance): ApiRoute[] {
  const doc = (
    app as unknown as { swagger(): { paths: Record<string, Record<string, unknown>> } }
  ).swagger();
  const routes: ApiRoute[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation)
        routes.push({
          method: method.toUpperCase() as ApiRoute["method"],
          path,
          operation: operation as ApiRoute["operation"],
        });
    }
  }
  return routes;
}

/** The path with every {param} replaced by `value(name)`. */
export function fillPath(path: string, value: (name: string) => string): string {
  return path.replace(/\{([^}]+)\}/g, (_whole, name: string) => value(name));
}

/**
 * Routes that take a bearer token: everything under /api/ except the public ingest paths and the
 * routes that sign people in (which document `security: []`).
 */
export function needsToken(route: ApiRoute): boolean {
  const signsIn = Array.isArray(route.operation.security) && route.operation.security.length === 0;
  return route.path.startsWith("/api/") && !route.path.startsWith("/api/public/") && !signsIn;
}
