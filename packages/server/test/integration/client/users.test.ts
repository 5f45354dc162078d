import { NetworkError, RequestError, paginate, request } from "@parley/client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEachDialect } from "../../helpers/dialects.js";
import { startClientApp, type ClientApp } from "./client-app.js";

describeEachDialect("the client and the users API on $name", (dialect) => {
  let c: ClientApp;
  beforeAll(async () => {
    c = await startClientApp(dialect);
  });
  afterAll(async () => {
    await c?.close();
  });

  it("creates, reads, disables and deletes a user with typed answers", async () => {
    const created = await c.admin("POST /api/admin/users", {
      username: "client-alice",
      displayName: "Alice",
      role: "user",
    });
    expect(created.status).toBe(201);
    expect(created.data).toMatchObject({
      username: "client-alice",
      role: "user",
      status: "active",
    });
    const id = created.data.id;

    const fetched = await c.admin("GET /api/admin/users/{id}", { id });
    expect(fetched.data.displayName).toBe("Alice");

    const token = await c.admin("POST /api/admin/users/{id}/tokens", { id, ttlSeconds: 600 });
    expect(token.status).toBe(201);
    const asAlice = c.admin.defaults({ headers: { authorization: `Bearer ${token.data.token}` } });
    expect((await asAlice("POST /api/rooms", { name: "alice's room" })).status).toBe(201);

    const disabled = await c.admin("POST /api/admin/users/{id}/disable", { id });
    expect(disabled.data.status).toBe("disabled");
    const refused = await asAlice("GET /api/rooms").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RequestError);
    expect((refused as RequestError).status).toBe(401);

    const deleted = await c.admin("DELETE /api/admin/users/{id}", { id });
    expect(deleted.status).toBe(204);
    expect(deleted.data).toBeUndefined();
  });

  it("walks every page of the users list", async () => {
    for (let i = 0; i < 7; i++) {
      await c.admin("POST /api/admin/users", { username: `paged-${i}`, role: "bot" });
    }
    const pages = [];
    for await (const page of paginate(c.admin, "GET /api/admin/users", { limit: 3 })) {
      pages.push(page);
    }
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(pages.slice(0, -1).every((page) => page.items.length === 3)).toBe(true);
    expect(pages.at(-1)!.nextCursor).toBeNull();
    const all = await paginate.all(c.admin, "GET /api/admin/users", { limit: 3 });
    expect(all).toEqual(pages.flatMap((page) => page.items));
    const names = all.map((user) => user.username);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(
      expect.arrayContaining(Array.from({ length: 7 }, (_, i) => `paged-${i}`)),
    );
  });

  it("throws RequestError with the problem's code and detail, token redacted", async () => {
    await c.admin("POST /api/admin/users", { username: "taken", role: "user" });
    const error = (await c
      .admin("POST /api/admin/users", { username: "taken", role: "user" })
      .catch((e: unknown) => e)) as RequestError;
    expect(error).toBeInstanceOf(RequestError);
    expect(error.status).toBe(409);
    expect(error.code).toBe("username_taken");
    expect(error.problem).toMatchObject({
      status: 409,
      code: "username_taken",
      title: expect.any(String),
    });
    expect(error.message).toContain(
      `POST ${c.baseUrl}/api/admin/users answered 409 username_taken: `,
    );
    expect(error.message).toContain(error.problem!.detail);
    expect(error.request.headers.authorization).toBe("Bearer [REDACTED]");
    const token = c.t.admin.token;
    expect(error.message).not.toContain(token);
    expect(JSON.stringify(error)).not.toContain(token);
    expect(String(error.stack)).not.toContain(token);
  });

  it("reports an unknown field and a missing token as Parley words them", async () => {
    const typo = (await c
      .admin("POST /api/admin/users", { username: "x", role: "user", rol: "admin" } as never)
      .catch((e: unknown) => e)) as RequestError;
    expect(typo.code).toBe("unknown_field");
    expect(typo.problem?.field).toBe("body.rol");

    const anonymous = (await request("GET /api/admin/users", { baseUrl: c.baseUrl }).catch(
      (e: unknown) => e,
    )) as RequestError;
    expect(anonymous.status).toBe(401);
    expect(anonymous.code).toBe("unauthorized");
    expect(anonymous.response.headers["www-authenticate"]).toMatch(/^Bearer/);
  });

  it("answers the operations routes: JSON, and text for /metrics", async () => {
    expect((await request("GET /healthz", { baseUrl: c.baseUrl })).status).toBe(200);
    const metrics = await request("GET /metrics", { baseUrl: c.baseUrl });
    expect(typeof metrics.data).toBe("string");
    expect(metrics.data).toContain("# HELP");
  });

  it("throws NetworkError once the server is gone", async () => {
    const gone = await startClientApp(dialect);
    const api = gone.admin;
    await gone.close();
    const error = await api("GET /api/admin/users").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(JSON.stringify(error)).not.toContain(gone.t.admin.token);
  });
});
