/**
 * /metrics can require a bearer token (PARLEY_METRICS_TOKEN): without it, or with any other token
 * (an API token included), the answer is 401 and holds no metric. Unset, /metrics stays open.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../helpers/build-app.js";

const TOKEN = "a-metrics-token-for-the-scraper";

describe("/metrics with PARLEY_METRICS_TOKEN", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(undefined, { metricsToken: TOKEN });
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each([
    ["no Authorization header", undefined],
    ["another token", `Bearer ${TOKEN}x`],
    ["the token cut short", `Bearer ${TOKEN.slice(0, -1)}`],
    ["the token without the Bearer scheme", TOKEN],
    ["an admin's API token", "admin"],
  ])("answers 401 to %s, with no metric in the answer", async (_name, authorization) => {
    const res = await t.app.inject({
      url: "/metrics",
      headers:
        authorization === undefined
          ? {}
          : {
              authorization:
                authorization === "admin" ? t.admin.headers.authorization : authorization,
            },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: "unauthorized" });
    expect(String(res.headers["www-authenticate"])).toMatch(/^Bearer /);
    expect(res.body).not.toContain("parley_");
  });

  it("serves the metrics to `Authorization: Bearer <token>`", async () => {
    const res = await t.app.inject({
      url: "/metrics",
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain("parley_process_cpu_user_seconds_total");
  });

  it("leaves /healthz and /readyz open for probes", async () => {
    expect((await t.app.inject({ url: "/healthz" })).statusCode).toBe(200);
    expect((await t.app.inject({ url: "/readyz" })).statusCode).toBe(200);
  });
});

describe("/metrics without PARLEY_METRICS_TOKEN", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it("answers anyone, as before", async () => {
    const res = await t.app.inject({ url: "/metrics" });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain("parley_process_cpu_user_seconds_total");
  });
});
