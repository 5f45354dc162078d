import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";

describeEachDialect("users on $name", (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });

  it("creates a user and answers 201 with its public fields", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/api/admin/users",
      headers: t.admin.headers,
      payload: { username: "alice", displayName: "Alice", role: "user" },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      username: "alice",
      displayName: "Alice",
      role: "user",
      status: "active",
    });
    expect(res.json().createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("answers 409 username_taken for a duplicate username", async () => {
    await t.user("user", "bob");
    const res = await t.app.inject({
      method: "POST",
      url: "/api/admin/users",
      headers: t.admin.headers,
      payload: { username: "bob", role: "user" },
    });
    expect(res.statusCode).toBe(409);
    expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 409, code: "username_taken" });
  });

  it("rejects an unknown field with 400 unknown_field naming it", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/api/admin/users",
      headers: t.admin.headers,
      payload: { username: "carol", role: "user", rol: "admin" },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: "unknown_field", field: "body.rol" });
  });

  it("answers 400 validation_failed naming the field for a bad role", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/api/admin/users",
      headers: t.admin.headers,
      payload: { username: "dave", role: "root" },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe("validation_failed");
    expect(res.json().detail).toContain("body.role");
  });

  it("does not coerce JSON body types: a number where a string belongs is a 400", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/api/admin/users",
      headers: t.admin.headers,
      payload: { username: "frank", displayName: 123, role: "user" },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: "validation_failed", field: "body.displayName" });
  });

  it("answers 415 for a non-JSON body and 400 invalid_json for malformed JSON", async () => {
    const text = await t.app.inject({
      method: "POST",
      url: "/api/admin/users",
      headers: { ...t.admin.headers, "content-type": "text/plain" },
      payload: "username=erin",
    });
    expect(text.statusCode).toBe(415);
    expect(text.json().code).toBe("unsupported_media_type");
    const broken = await t.app.inject({
      method: "POST",
      url: "/api/admin/users",
      headers: { ...t.admin.headers, "content-type": "application/json" },
      payload: '{"username": "erin",',
    });
    expect(broken.statusCode).toBe(400);
    expect(broken.json().code).toBe("invalid_json");
  });

  it("issues a token that authenticates as the user", async () => {
    const created = await t.app.inject({
      method: "POST",
      url: "/api/admin/users",
      headers: t.admin.headers,
      payload: { username: "bot-1", role: "bot" },
    });
    const id = created.json().id;
    const issued = await t.app.inject({
      method: "POST",
      url: `/api/admin/users/${id}/tokens`,
      headers: t.admin.headers,
      payload: { ttlSeconds: 600 },
    });
    expect(issued.statusCode).toBe(201);
    const principal = await import("../../../src/auth/require-role.js").then((m) =>
      m.authenticateRequest(t.ctx, `Bearer ${issued.json().token}`),
    );
    expect(principal).toEqual({ userId: id, username: "bot-1", role: "bot" });
  });

  it("disables a user once, fires ADMIN_USER_DISABLED and stops its tokens", async () => {
    const victim = await t.user("user");
    const seen: Array<[string, unknown]> = [];
    const off = t.ctx.spine.onEventCommitted((event, data) => seen.push([event, data]));
    const first = await t.app.inject({
      method: "POST",
      url: `/api/admin/users/${victim.id}/disable`,
      headers: t.admin.headers,
    });
    const again = await t.app.inject({
      method: "POST",
      url: `/api/admin/users/${victim.id}/disable`,
      headers: t.admin.headers,
    });
    off();
    expect(first.statusCode).toBe(200);
    expect(first.json().status).toBe("disabled");
    expect(again.statusCode).toBe(200);
    expect(seen).toEqual([
      ["ADMIN_USER_DISABLED", { username: victim.username, adminActor: "admin" }],
    ]);
    const res = await t.app.inject({
      method: "GET",
      url: "/api/admin/users",
      headers: victim.headers,
    });
    expect(res.statusCode).toBe(401);
  });

  it("deletes a user, fires ADMIN_USER_DELETED, then answers 404 for it", async () => {
    const victim = await t.user("user");
    const seen: string[] = [];
    const off = t.ctx.spine.onEventCommitted((event) => seen.push(event));
    const res = await t.app.inject({
      method: "DELETE",
      url: `/api/admin/users/${victim.id}`,
      headers: t.admin.headers,
    });
    off();
    expect(res.statusCode).toBe(204);
    expect(seen).toEqual(["ADMIN_USER_DELETED"]);
    const again = await t.app.inject({
      method: "GET",
      url: `/api/admin/users/${victim.id}`,
      headers: t.admin.headers,
    });
    expect(again.statusCode).toBe(404);
    expect(again.json().code).toBe("not_found");
  });

  it("pages through users with limit and cursor", async () => {
    for (let i = 0; i < 3; i++) await t.user("user");
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const res = await t.app.inject({
        method: "GET",
        url: `/api/admin/users?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
        headers: t.admin.headers,
      });
      expect(res.statusCode).toBe(200);
      const page = res.json() as { items: Array<{ id: number }>; nextCursor: string | null };
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((u) => u.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(new Set(seen).size).toBe(seen.length);
    const bad = await t.app.inject({
      method: "GET",
      url: "/api/admin/users?cursor=nonsense",
      headers: t.admin.headers,
    });
    expect(bad.json().code).toBe("invalid_cursor");
  });
});

describe("optional request bodies", () => {
  it("issues a token when the body is left out entirely, with or without a JSON content type", async () => {
    const t = await createTestApp();
    try {
      const bot = await t.user("bot");
      const bare = await t.app.inject({
        method: "POST",
        url: `/api/admin/users/${bot.id}/tokens`,
        headers: t.admin.headers,
      });
      expect(bare.statusCode).toBe(201);
      const empty = await t.app.inject({
        method: "POST",
        url: `/api/admin/users/${bot.id}/tokens`,
        headers: { ...t.admin.headers, "content-type": "application/json" },
        payload: "",
      });
      expect(empty.statusCode).toBe(201);
      expect(empty.json().token.split(".")).toHaveLength(3);
    } finally {
      await t.close();
    }
  });
});
