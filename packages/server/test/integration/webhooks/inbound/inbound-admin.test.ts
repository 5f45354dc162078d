import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../../helpers/build-app.js";
import { describeEachDialect, SQLITE } from "../../../helpers/dialects.js";
import { hashIngestToken } from "../../../../src/webhooks/inbound/ingest-token.js";
import { createRoom } from "../../../helpers/fixtures.js";
import { createWebhook } from "./inbound-helpers.js";
import { nextMillisecond } from "../../../helpers/wait-for.js";

const BASE = "/api/admin/inbound-webhooks";

describeEachDialect("inbound webhook admin API on $name", (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect, { publicBaseUrl: "https://chat.example.com/" });
  });
  afterAll(async () => {
    await t.close();
  });

  it("creates a webhook and shows its token and ingest URLs once, storing only the hash and last 8", async () => {
    const roomId = (await createRoom(t)).id;
    const res = await t.app.inject({
      method: "POST",
      url: BASE,
      headers: t.admin.headers,
      payload: { roomId, displayName: "Alertmanager", avatarUrl: "https://example.com/am.png" },
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      roomId,
      displayName: "Alertmanager",
      avatarUrl: "https://example.com/am.png",
      enabled: true,
      allowOverrides: false,
    });
    expect(body.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(body.tokenLast8).toBe(body.token.slice(-8));
    expect(body.url).toBe(`https://chat.example.com/api/public/webhooks/ingest/${body.token}`);
    expect(body.slackUrl).toBe(`${body.url}/slack`);
    expect(body.githubUrl).toBe(`${body.url}/github`);
    expect(body.stripeUrl).toBe(`${body.url}/stripe`);
    expect(body.discordUrl).toBe(
      `https://chat.example.com/api/public/discord/v10/webhooks/${body.id}/${body.token}`,
    );
    expect(body.createdAt).toMatch(/Z$/);
    expect(body.updatedAt).toBe(body.createdAt);

    const row = await t.ctx.db
      .selectFrom("inbound_webhooks")
      .selectAll()
      .where("id", "=", body.id)
      .executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(hashIngestToken(body.token));
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.token_last8).toBe(body.token.slice(-8));
    expect(JSON.stringify(row)).not.toContain(body.token);
    expect(row.created_by).toBe(t.admin.id);
  });

  it("never shows a full token in list, get or patch answers", async () => {
    const hooks = [await createWebhook(t), await createWebhook(t, { displayName: "Second" })];
    const texts = [
      (await t.app.inject({ method: "GET", url: BASE, headers: t.admin.headers })).body,
      (
        await t.app.inject({
          method: "GET",
          url: `${BASE}/${hooks[0]!.id}`,
          headers: t.admin.headers,
        })
      ).body,
      (
        await t.app.inject({
          method: "PATCH",
          url: `${BASE}/${hooks[1]!.id}`,
          headers: t.admin.headers,
          payload: { displayName: "Renamed" },
        })
      ).body,
    ];
    for (const text of texts) {
      expect(text).not.toMatch(/"token"\s*:/);
      expect(text).not.toContain('"url"');
      for (const hook of hooks) {
        expect(text).not.toContain(hook.token);
        expect(text).not.toContain(hook.token.slice(0, 35));
      }
    }
    const list = JSON.parse(texts[0]!);
    for (const hook of hooks) {
      expect(list.items.find((item: { id: number }) => item.id === hook.id)).toMatchObject({
        tokenLast8: hook.tokenLast8,
      });
    }
  });

  it("pages the list with limit and cursor, and filters by roomId", async () => {
    const roomId = (await createRoom(t)).id;
    const ids = [];
    for (let i = 0; i < 3; i++)
      ids.push((await createWebhook(t, { roomId, displayName: `p${i}` })).id);
    const first = await t.app.inject({
      method: "GET",
      url: `${BASE}?roomId=${roomId}&limit=2`,
      headers: t.admin.headers,
    });
    expect(first.json().items.map((i: { id: number }) => i.id)).toEqual(ids.slice(0, 2));
    expect(first.json().nextCursor).toEqual(expect.any(String));
    const second = await t.app.inject({
      method: "GET",
      url: `${BASE}?roomId=${roomId}&limit=2&cursor=${first.json().nextCursor}`,
      headers: t.admin.headers,
    });
    expect(second.json()).toEqual({
      items: [expect.objectContaining({ id: ids[2] })],
      nextCursor: null,
    });
    const bad = await t.app.inject({
      method: "GET",
      url: `${BASE}?cursor=nonsense`,
      headers: t.admin.headers,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe("invalid_cursor");
  });

  it("patches displayName, avatarUrl, enabled and allowOverrides and bumps updatedAt", async () => {
    const hook = await createWebhook(t);
    await nextMillisecond();
    const res = await t.app.inject({
      method: "PATCH",
      url: `${BASE}/${hook.id}`,
      headers: t.admin.headers,
      payload: { displayName: "New name", avatarUrl: null, enabled: false, allowOverrides: true },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      id: hook.id,
      displayName: "New name",
      avatarUrl: null,
      enabled: false,
      allowOverrides: true,
    });
    expect(Date.parse(res.json().updatedAt)).toBeGreaterThan(Date.parse(res.json().createdAt));
    const get = await t.app.inject({
      method: "GET",
      url: `${BASE}/${hook.id}`,
      headers: t.admin.headers,
    });
    expect(get.json()).toEqual(res.json());
  });

  it("rejects unknown fields on create and patch with unknown_field", async () => {
    const roomId = (await createRoom(t)).id;
    const create = await t.app.inject({
      method: "POST",
      url: BASE,
      headers: t.admin.headers,
      payload: { roomId, displayName: "x", token: "mine" },
    });
    expect(create.statusCode).toBe(400);
    expect(create.json()).toMatchObject({ code: "unknown_field", field: "body.token" });
    const hook = await createWebhook(t);
    const patch = await t.app.inject({
      method: "PATCH",
      url: `${BASE}/${hook.id}`,
      headers: t.admin.headers,
      payload: { roomId },
    });
    expect(patch.statusCode).toBe(400);
    expect(patch.json()).toMatchObject({ code: "unknown_field", field: "body.roomId" });
  });

  it("validates displayName, avatarUrl and roomId", async () => {
    const roomId = (await createRoom(t)).id;
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ roomId, displayName: "" }, "validation_failed", "body.displayName"],
      [{ roomId, displayName: "   " }, "validation_failed", "body.displayName"],
      [{ roomId, displayName: "x".repeat(201) }, "validation_failed", "body.displayName"],
      [{ roomId }, "validation_failed", "body.displayName"],
      [{ displayName: "x" }, "validation_failed", "body.roomId"],
      [
        { roomId, displayName: "x", avatarUrl: "javascript:alert(1)" },
        "invalid_url",
        "body.avatarUrl",
      ],
      [{ roomId, displayName: "x", avatarUrl: "/relative.png" }, "invalid_url", "body.avatarUrl"],
      [
        { roomId, displayName: "x", avatarUrl: "ftp://example.com/a.png" },
        "invalid_url",
        "body.avatarUrl",
      ],
      [{ roomId: 999999, displayName: "x" }, "validation_failed", "body.roomId"],
    ];
    for (const [payload, code, field] of cases) {
      const res = await t.app.inject({
        method: "POST",
        url: BASE,
        headers: t.admin.headers,
        payload,
      });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json(), JSON.stringify(payload)).toMatchObject({ code });
      expect(JSON.stringify(res.json()), JSON.stringify(payload)).toContain(field);
    }
    expect(
      (await createWebhook(t, { roomId, displayName: "x".repeat(200) })).displayName,
    ).toHaveLength(200);
  });

  it("refuses a deleted room with 400 validation_failed naming roomId", async () => {
    const roomId = (await createRoom(t)).id;
    await t.ctx.db
      .updateTable("rooms")
      .set({ deleted_at: Date.now() })
      .where("id", "=", roomId)
      .execute();
    const res = await t.app.inject({
      method: "POST",
      url: BASE,
      headers: t.admin.headers,
      payload: { roomId, displayName: "x" },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: "validation_failed", field: "body.roomId" });
  });

  it("answers 404 for an unknown id on get, patch, delete and rotate", async () => {
    for (const [method, url] of [
      ["GET", `${BASE}/999999`],
      ["PATCH", `${BASE}/999999`],
      ["DELETE", `${BASE}/999999`],
      ["POST", `${BASE}/999999/rotate-token`],
    ] as const) {
      const res = await t.app.inject({
        method,
        url,
        headers: t.admin.headers,
        ...(method === "PATCH" ? { payload: { enabled: true } } : {}),
      });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().code).toBe("not_found");
    }
  });

  it("deletes with 204, after which get answers 404", async () => {
    const hook = await createWebhook(t);
    expect(
      (
        await t.app.inject({
          method: "DELETE",
          url: `${BASE}/${hook.id}`,
          headers: t.admin.headers,
        })
      ).statusCode,
    ).toBe(204);
    expect(
      (await t.app.inject({ method: "GET", url: `${BASE}/${hook.id}`, headers: t.admin.headers }))
        .statusCode,
    ).toBe(404);
  });

  it("rotates to a fresh token shown once, keeping everything else", async () => {
    const hook = await createWebhook(t, { displayName: "Keeper" });
    const res = await t.app.inject({
      method: "POST",
      url: `${BASE}/${hook.id}/rotate-token`,
      headers: t.admin.headers,
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      id: hook.id,
      roomId: hook.roomId,
      displayName: "Keeper",
      tokenLast8: body.token.slice(-8),
    });
    expect(body.token).not.toBe(hook.token);
    expect(body.url).toBe(`https://chat.example.com/api/public/webhooks/ingest/${body.token}`);
    expect(body.discordUrl).toBe(
      `https://chat.example.com/api/public/discord/v10/webhooks/${hook.id}/${body.token}`,
    );
    expect(body.githubUrl).toBe(`${body.url}/github`);
  });

  it("needs the admin role: 401 without a token, 403 for a user or bot", async () => {
    const anonymous = await t.app.inject({ method: "GET", url: BASE });
    expect(anonymous.statusCode).toBe(401);
    for (const role of ["user", "bot"] as const) {
      const someone = await t.user(role);
      const res = await t.app.inject({ method: "GET", url: BASE, headers: someone.headers });
      expect(res.statusCode).toBe(403);
    }
  });
});

describe("ingest URL without a public base URL", () => {
  it("uses http://<host>:<port>", async () => {
    const t = await createTestApp(SQLITE, { host: "127.0.0.1", port: 9123 });
    try {
      const hook = await createWebhook(t);
      expect(hook.url).toBe(`http://127.0.0.1:9123/api/public/webhooks/ingest/${hook.token}`);
    } finally {
      await t.close();
    }
  });
});
