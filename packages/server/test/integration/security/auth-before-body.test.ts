import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../helpers/build-app.js";
import { apiRoutes, fillPath, needsToken } from "../../helpers/api-routes.js";

/** 1 MiB of nested arrays: costly to parse and to validate, and no route's body. */
const NESTED = "[".repeat(512 * 1024) + "]".repeat(512 * 1024);

describe("authentication before the body", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it("answers 401 on every token route without reading a malformed body", async () => {
    const routes = apiRoutes(t.app).filter(needsToken);
    expect(routes.length).toBeGreaterThan(20);
    for (const route of routes) {
      const res = await t.app.inject({
        method: route.method,
        url: fillPath(route.path, () => "not-a-number"),
        headers: { "content-type": "application/json" },
        payload: route.method === "GET" ? undefined : "{not json",
      });
      expect(res.statusCode, `${route.method} ${route.path}`).toBe(401);
    }
  });

  it("answers 401, not a schema message, to POST /api/admin/users without a token", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/api/admin/users",
      payload: { username: "no spaces allowed", role: "admin" },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe("unauthorized");
  });

  it("answers 403 to the wrong role before looking at the body", async () => {
    const user = await t.user();
    const res = await t.app.inject({
      method: "POST",
      url: "/api/admin/users",
      headers: { ...user.headers, "content-type": "application/json" },
      payload: "{not json",
    });
    expect(res.statusCode).toBe(403);
  });

  it("refuses 1 MiB of nested arrays without a token at once, and with one by its size", async () => {
    const started = performance.now();
    const anonymous = await t.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: { "content-type": "application/json" },
      payload: NESTED,
    });
    expect(anonymous.statusCode).toBe(401);
    expect(performance.now() - started).toBeLessThan(100);

    const user = await t.user();
    const signedIn = await t.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: { ...user.headers, "content-type": "application/json" },
      payload: NESTED,
    });
    expect(signedIn.statusCode).toBe(400);
    expect(signedIn.json().code).toBe("body_too_large");
  });

  it("still takes a message of 16384 bytes that JSON escapes six-fold", async () => {
    const user = await t.user();
    const room = await t.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: user.headers,
      payload: { name: "escapes" },
    });
    const res = await t.app.inject({
      method: "POST",
      url: `/api/rooms/${room.json<{ id: number }>().id}/messages`,
      headers: user.headers,
      payload: { content: "\u0001".repeat(16_383) + "x" },
    });
    expect(res.statusCode).toBe(201);
  });
});
