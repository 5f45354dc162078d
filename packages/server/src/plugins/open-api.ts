import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";

/**
 * The OpenAPI document of every route registered after it (GET /openapi.json) and its browsable
 * docs (/docs). Register it before the route families: it collects them as they are added.
 */
export const openApi = fp(async function openApi(app: FastifyInstance) {
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Parley API",
        version: "1.0.0",
        description: "Chat, outbound and inbound webhooks.",
      },
      components: {
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
          // A cookie-authenticated unsafe request also carries X-Parley-CSRF (docs/security.md).
          session: { type: "apiKey", in: "cookie", name: "parley_session" },
        },
      },
    },
  });
  await app.register(swaggerUi, {
    routePrefix: "/docs",
    // The UI's own policy (its inline script allowed by hash only), but never framed, and without
    // upgrade-insecure-requests, which would break the docs of a server reached over plain http.
    staticCSP: true,
    transformStaticCSP: (header: string) =>
      header
        .replace("frame-ancestors 'self'", "frame-ancestors 'none'")
        .replace(/\s*upgrade-insecure-requests;?/, ""),
  });
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
});
