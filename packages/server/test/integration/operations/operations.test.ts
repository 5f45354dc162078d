import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../helpers/build-app.js";
import { describeEachDialect, SQLITE } from "../../helpers/dialects.js";

describeEachDialect("operations endpoints on $name", (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });

  it("answers /healthz and /readyz while the database is reachable", async () => {
    expect((await t.app.inject({ url: "/healthz" })).json()).toEqual({ status: "ok" });
    const ready = await t.app.inject({ url: "/readyz" });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: "ready" });
  });

  it("serves Prometheus metrics including HTTP request durations", async () => {
    await t.app.inject({ url: "/healthz" });
    const res = await t.app.inject({ url: "/metrics" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    expect(res.body).toContain("parley_process_cpu_user_seconds_total");
    expect(res.body).toMatch(
      /parley_http_request_duration_seconds_count\{method="GET",route="\/healthz",status="200"\} \d+/,
    );
  });

  it("publishes an OpenAPI document generated from the route schemas, and the docs page", async () => {
    const res = await t.app.inject({ url: "/openapi.json" });
    expect(res.statusCode).toBe(200);
    const doc = res.json() as {
      openapi: string;
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toContain("/api/admin/users");
    expect(Object.keys(doc.paths["/api/admin/users"]!.post!.responses)).toEqual(
      expect.arrayContaining(["201", "400", "401", "403", "409"]),
    );
    const docs = await t.app.inject({ url: "/docs/" });
    expect(docs.statusCode).toBe(200);
    expect(docs.body).toContain("swagger-ui");
  });

  it("answers unknown routes with problem details code route_not_found", async () => {
    const res = await t.app.inject({ url: "/api/nothing-here?x=1" });
    expect(res.statusCode).toBe(404);
    expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({
      status: 404,
      code: "route_not_found",
      detail: "no route GET /api/nothing-here",
    });
  });
});

describe("readiness without a database", () => {
  it("answers 503 service_unavailable once the database is gone", async () => {
    const t = await createTestApp(SQLITE);
    await t.ctx.database.close();
    const res = await t.app.inject({ url: "/readyz" });
    expect(res.statusCode).toBe(503);
    expect(res.json().code).toBe("service_unavailable");
    await t.app.close();
  });
});
