import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../../../../helpers/build-app.js";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { endpointBody } from "../../../../helpers/fixtures.js";
import { countRows } from "./webhook-fixtures.js";

type Method = "GET" | "POST" | "PATCH" | "DELETE";

/** Every admin route of outbound webhooks, with a body that would otherwise be accepted. */
const ROUTES: ReadonlyArray<{
  method: Method;
  url: string;
  openapiPath: string;
  payload?: object;
}> = [
  {
    method: "POST",
    url: "/api/admin/webhooks",
    openapiPath: "/api/admin/webhooks",
    payload: endpointBody(),
  },
  { method: "GET", url: "/api/admin/webhooks", openapiPath: "/api/admin/webhooks" },
  { method: "GET", url: "/api/admin/webhooks/1", openapiPath: "/api/admin/webhooks/{id}" },
  {
    method: "PATCH",
    url: "/api/admin/webhooks/1",
    openapiPath: "/api/admin/webhooks/{id}",
    payload: { enabled: false },
  },
  { method: "DELETE", url: "/api/admin/webhooks/1", openapiPath: "/api/admin/webhooks/{id}" },
  {
    method: "POST",
    url: "/api/admin/webhooks/1/test",
    openapiPath: "/api/admin/webhooks/{id}/test",
  },
  {
    method: "GET",
    url: "/api/admin/webhooks/1/deliveries",
    openapiPath: "/api/admin/webhooks/{id}/deliveries",
  },
  {
    method: "GET",
    url: "/api/admin/webhooks/1/deliveries/1",
    openapiPath: "/api/admin/webhooks/{id}/deliveries/{deliveryId}",
  },
  {
    method: "POST",
    url: "/api/admin/webhooks/1/deliveries/1/redeliver",
    openapiPath: "/api/admin/webhooks/{id}/deliveries/{deliveryId}/redeliver",
  },
];

function call(t: TestApp, route: (typeof ROUTES)[number], headers: Record<string, string> = {}) {
  return t.app.inject({
    method: route.method,
    url: route.url,
    headers,
    ...(route.payload ? { payload: route.payload } : {}),
  });
}

describeEachDialect("outbound webhook admin access on $name", (dialect) => {
  let enterprise: TestApp;
  let community: TestApp;
  let member: TestUser;
  beforeAll(async () => {
    enterprise = await createTestApp(dialect);
    community = await createTestApp(dialect, { edition: "community" });
    member = await enterprise.user("user");
  });
  afterAll(async () => {
    await enterprise.close();
    await community.close();
  });

  it.each(ROUTES)(
    "$method $url answers 401 with WWW-Authenticate without a token",
    async (route) => {
      const res = await call(enterprise, route);
      expect(res.statusCode).toBe(401);
      expect(res.headers["www-authenticate"]).toMatch(/^Bearer/);
      expect(res.json().code).toBe("unauthorized");
    },
  );

  it.each(ROUTES)("$method $url answers 403 forbidden for a non-admin token", async (route) => {
    const res = await call(enterprise, route, member.headers);
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe("forbidden");
  });

  it.each(ROUTES)(
    "$method $url answers 403 enterprise_required in the Community edition",
    async (route) => {
      const res = await call(community, route, community.admin.headers);
      expect(res.statusCode).toBe(403);
      expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ status: 403, code: "enterprise_required" });
    },
  );

  it("still answers 401 without a token in the Community edition", async () => {
    for (const route of ROUTES) {
      const res = await call(community, route);
      expect(res.statusCode, `${route.method} ${route.url}`).toBe(401);
    }
  });

  it("creates nothing in the Community edition", async () => {
    await call(community, ROUTES[0]!, community.admin.headers);
    expect(await countRows(community, "webhooks")).toBe(0);
  });

  it("documents every route in OpenAPI under the webhooks tag with bearer security and its error answers", async () => {
    const res = await enterprise.app.inject({ method: "GET", url: "/openapi.json" });
    const spec = res.json() as {
      paths: Record<
        string,
        Record<string, { tags: string[]; security: unknown[]; responses: Record<string, unknown> }>
      >;
    };
    for (const route of ROUTES) {
      const operation = spec.paths[route.openapiPath]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.openapiPath}`).toBeDefined();
      expect(operation!.tags).toEqual(["webhooks"]);
      expect(operation!.security).toEqual([{ bearer: [] }]);
      expect(Object.keys(operation!.responses)).toEqual(
        expect.arrayContaining(["400", "401", "403"]),
      );
      if (route.openapiPath.includes("{id}"))
        expect(Object.keys(operation!.responses)).toContain("404");
    }
  });
});
