/**
 * How the server answers for the admin UI, without a browser: security headers on every answer,
 * the page for deep links, long-cached hashed assets, and a 503 (not a crash) before the bundle
 * is built.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminUiRoutes } from "../../src/http/admin-ui-routes.js";
import { problemDetails } from "../../src/plugins/problem-details.js";
import { createTestApp, type TestApp } from "../helpers/build-app.js";
import { SQLITE } from "../helpers/dialects.js";

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
const PAGE = '<!doctype html><script type="module" src="/admin/assets/app-ABC123.js"></script>';

function expectSecurityHeaders(headers: Record<string, unknown>): void {
  expect(headers["content-security-policy"]).toBe(CSP);
  expect(headers["x-content-type-options"]).toBe("nosniff");
  expect(headers["referrer-policy"]).toBe("no-referrer");
}

async function serve(dir: string): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  await app.register(problemDetails);
  await app.register(adminUiRoutes, { dir });
  await app.ready();
  return app;
}

describe("admin UI routes", () => {
  let dir: string;
  let app: FastifyInstance;
  let missing: FastifyInstance;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-admin-ui-"));
    fs.mkdirSync(path.join(dir, "assets"));
    fs.writeFileSync(path.join(dir, "index.html"), PAGE);
    fs.writeFileSync(path.join(dir, "assets", "app-ABC123.js"), "console.log(1);");
    fs.writeFileSync(path.join(dir, "assets", "app-style-DEF456.css"), "body{}");
    app = await serve(dir);
    missing = await serve(path.join(dir, "not-built"));
  });

  afterAll(async () => {
    await app.close();
    await missing.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it.each(["/admin/", "/admin/webhooks/3", "/admin/moderation/12", "/admin/inbound?x=1"])(
    "answers the page for %s with the security headers",
    async (url) => {
      const res = await app.inject({ method: "GET", url });
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(res.headers["cache-control"]).toBe("no-cache");
      expectSecurityHeaders(res.headers);
      expect(res.body).toBe(PAGE);
    },
  );

  it("redirects /admin to /admin/", async () => {
    const res = await app.inject({ method: "GET", url: "/admin" });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe("/admin/");
  });

  it("serves hashed assets with a year-long immutable cache and their own types", async () => {
    const js = await app.inject({ method: "GET", url: "/admin/assets/app-ABC123.js" });
    expect(js.statusCode).toBe(200);
    expect(js.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(js.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expectSecurityHeaders(js.headers);
    expect(js.body).toBe("console.log(1);");

    const css = await app.inject({ method: "GET", url: "/admin/assets/app-style-DEF456.css" });
    expect(css.headers["content-type"]).toBe("text/css; charset=utf-8");
  });

  it.each([
    "/admin/assets/app-OLD.js",
    "/admin/assets/%2e%2e%2findex.html",
    "/admin/assets/x/y.js",
  ])("answers 404 problem+json, never the page, for the unknown asset %s", async (url) => {
    const res = await app.inject({ method: "GET", url });
    expect(res.statusCode).toBe(404);
    expect(res.headers["content-type"]).toContain("application/problem+json");
    expectSecurityHeaders(res.headers);
    expect(res.body).not.toContain("<!doctype");
  });

  it.each(["/admin/", "/admin/moderation/12", "/admin/assets/app-ABC123.js"])(
    "answers 503 explaining to run the build when the bundle is missing (%s)",
    async (url) => {
      const res = await missing.inject({ method: "GET", url });
      expect(res.statusCode).toBe(503);
      expect(res.headers["content-type"]).toContain("application/problem+json");
      expect(res.headers["cache-control"]).toBe("no-store");
      expectSecurityHeaders(res.headers);
      expect(res.json()).toMatchObject({ status: 503, code: "service_unavailable" });
      expect(res.json().detail).toContain("npm run build");
    },
  );

  it("starts serving once the bundle appears, without a restart", async () => {
    const late = path.join(dir, "late");
    const server = await serve(late);
    try {
      expect((await server.inject({ method: "GET", url: "/admin/" })).statusCode).toBe(503);
      fs.mkdirSync(path.join(late, "assets"), { recursive: true });
      fs.writeFileSync(path.join(late, "index.html"), PAGE);
      expect((await server.inject({ method: "GET", url: "/admin/" })).statusCode).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe("admin UI in the app", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(SQLITE);
  });
  afterAll(async () => {
    await t.close();
  });

  it("is registered at /admin/* with its headers, and stays out of the API and the OpenAPI", async () => {
    const page = await t.app.inject({ method: "GET", url: "/admin/moderation/12" });
    // 200 once `npm run build` has bundled the UI, 503 before: both are the UI's answers.
    expect([200, 503]).toContain(page.statusCode);
    expectSecurityHeaders(page.headers);

    const api = await t.app.inject({ method: "GET", url: "/healthz" });
    // The API's own policy (nothing may load), not the UI's.
    expect(api.headers["content-security-policy"]).toMatch(/^default-src 'none'/);

    const openapi = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json();
    expect(Object.keys(openapi.paths).filter((p) => p.startsWith("/admin"))).toEqual([]);
  });
});
