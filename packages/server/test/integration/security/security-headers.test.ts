import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../helpers/build-app.js";

describe("security headers", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ["an API answer", "/api/rooms", true],
    ["an API error", "/api/rooms", false],
    ["an unknown route", "/api/nowhere", true],
    ["the OpenAPI document", "/openapi.json", false],
    ["the health check", "/healthz", false],
  ])("sends nosniff and forbids framing on %s", async (_name, url, authenticated) => {
    const res = await t.app.inject({ url, headers: authenticated ? t.admin.headers : {} });
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["x-frame-options"]).toBe("DENY");
    expect(String(res.headers["content-security-policy"])).toContain("frame-ancestors 'none'");
  });

  it("gives the API docs a content security policy without inline scripts, not frameable", async () => {
    const page = await t.app.inject({ url: "/docs" });
    expect(page.statusCode).toBe(200);
    const csp = String(page.headers["content-security-policy"]);
    expect(csp).toMatch(/script-src 'self'/);
    expect(csp).not.toMatch(/script-src[^;]*'unsafe-inline'/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("upgrade-insecure-requests");
    expect(page.headers["x-frame-options"]).toBe("DENY");
    expect(page.headers["x-content-type-options"]).toBe("nosniff");
  });
});
