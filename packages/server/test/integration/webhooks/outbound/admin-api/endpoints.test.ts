import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSecret } from "../../../../../src/config/secret-box.js";
import { createTestApp, type TestApp } from "../../../../helpers/build-app.js";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { createEndpoint, endpointBody, SECRET } from "../../../../helpers/fixtures.js";
import { admin, countRows } from "./webhook-fixtures.js";
import { nextMillisecond } from "../../../../helpers/wait-for.js";

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describeEachDialect("outbound webhook endpoints on $name", (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });

  it("creates an endpoint and answers 201 with its public fields", async () => {
    const res = await admin(
      t,
      "POST",
      "/api/admin/webhooks",
      endpointBody({ events: ["MESSAGE_CREATED", "ROOM_CREATED"] }),
    );
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual([
      "auth",
      "autoDisableAt",
      "createdAt",
      "disabledAt",
      "disabledBy",
      "disabledReason",
      "enabled",
      "events",
      "failuresToAutoDisable",
      "headers",
      "health",
      "heldLanes",
      "id",
      "maxDeliveriesPerSecond",
      "name",
      "ordering",
      "payloadFormat",
      "publicKey",
      "roomIds",
      "signatureScheme",
      "state",
      "tls",
      "traceContext",
      "updatedAt",
      "url",
      "verification",
    ]);
    expect(body).toMatchObject({
      name: "Audit sink",
      url: "https://hooks.example.com/parley",
      events: ["MESSAGE_CREATED", "ROOM_CREATED"],
      enabled: true,
      payloadFormat: "parley",
      traceContext: false,
    });
    expect(body.id).toEqual(expect.any(Number));
    expect(body.createdAt).toMatch(ISO_MS);
    expect(body.updatedAt).toBe(body.createdAt);

    const row = await t.ctx.db
      .selectFrom("webhooks")
      .selectAll()
      .where("id", "=", body.id)
      .executeTakeFirstOrThrow();
    expect(row.enabled).toBe(1);
    expect(JSON.parse(row.events)).toEqual(["MESSAGE_CREATED", "ROOM_CREATED"]);
  });

  it("creates a disabled endpoint when enabled is false", async () => {
    const created = await createEndpoint(t, { enabled: false });
    expect(created.enabled).toBe(false);
    const row = await t.ctx.db
      .selectFrom("webhooks")
      .select("enabled")
      .where("id", "=", created.id)
      .executeTakeFirstOrThrow();
    expect(row.enabled).toBe(0);
  });

  it("stores the secret encrypted: the column holds no plaintext and opens to the secret", async () => {
    const created = await createEndpoint(t);
    const row = await t.ctx.db
      .selectFrom("webhooks")
      .select("secret_ciphertext")
      .where("id", "=", created.id)
      .executeTakeFirstOrThrow();
    expect(row.secret_ciphertext).not.toContain(SECRET);
    expect(Buffer.from(row.secret_ciphertext, "base64").toString("latin1")).not.toContain(SECRET);
    expect(openSecret(t.ctx.keys.secretKey, row.secret_ciphertext)).toBe(SECRET);
  });

  it("never returns the secret in any answer, errors included", async () => {
    const newSecret = "rotated-secret-9f8e7d6c5b4a";
    const answers = [];
    const created = await admin(t, "POST", "/api/admin/webhooks", endpointBody());
    answers.push(created);
    const id = created.json().id as number;
    answers.push(await admin(t, "GET", "/api/admin/webhooks?limit=200"));
    answers.push(await admin(t, "GET", `/api/admin/webhooks/${id}`));
    answers.push(await admin(t, "PATCH", `/api/admin/webhooks/${id}`, { secret: newSecret }));
    answers.push(await admin(t, "PATCH", `/api/admin/webhooks/${id}`, { name: "renamed" }));
    const test = await admin(t, "POST", `/api/admin/webhooks/${id}/test`);
    answers.push(test);
    const deliveryId = test.json().deliveryId as number;
    answers.push(await admin(t, "GET", `/api/admin/webhooks/${id}/deliveries`));
    answers.push(await admin(t, "GET", `/api/admin/webhooks/${id}/deliveries/${deliveryId}`));
    answers.push(
      await admin(t, "POST", `/api/admin/webhooks/${id}/deliveries/${deliveryId}/redeliver`),
    );
    // Refused inputs that carry a secret must not echo it either.
    answers.push(
      await admin(t, "POST", "/api/admin/webhooks", endpointBody({ secret: SECRET.slice(0, 15) })),
    );
    answers.push(await admin(t, "POST", "/api/admin/webhooks", endpointBody({ name: "" })));
    answers.push(
      await admin(t, "PATCH", `/api/admin/webhooks/${id}`, { secret: `${newSecret}`.repeat(100) }),
    );

    expect(answers.map((a) => a.statusCode)).toEqual([
      201, 200, 200, 200, 200, 202, 200, 200, 202, 400, 400, 400,
    ]);
    for (const answer of answers) {
      expect(answer.body).not.toContain(SECRET);
      expect(answer.body).not.toContain(SECRET.slice(0, 15));
      expect(answer.body).not.toContain(newSecret);
      expect(answer.body).not.toMatch(/secret_ciphertext|"secret"/);
    }
  });

  it("gets an endpoint by id and answers 404 not_found for an unknown one", async () => {
    const created = await createEndpoint(t, { name: "Getter" });
    const res = await admin(t, "GET", `/api/admin/webhooks/${created.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(created);

    const missing = await admin(t, "GET", "/api/admin/webhooks/999999");
    expect(missing.statusCode).toBe(404);
    expect(missing.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(missing.json()).toMatchObject({ status: 404, code: "not_found" });
  });

  it("answers 400 validation_failed for an id that is not a positive integer", async () => {
    const res = await admin(t, "GET", "/api/admin/webhooks/abc");
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe("validation_failed");
  });

  it("lists endpoints oldest first across pages of the requested size", async () => {
    const made = [await createEndpoint(t), await createEndpoint(t), await createEndpoint(t)];
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `/api/admin/webhooks?limit=2${cursor ? `&cursor=${cursor}` : ""}`;
      const res = await admin(t, "GET", url);
      expect(res.statusCode).toBe(200);
      const page = res.json() as { items: Array<{ id: number }>; nextCursor: string | null };
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((item) => item.id));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== null && pages < 100);
    expect(cursor).toBeNull();
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(made.map((m) => m.id)));
    expect(seen.length).toBe(await countRows(t, "webhooks"));
  });

  it("answers 400 invalid_cursor for a cursor it did not hand out and unknown_field for a stray query field", async () => {
    const cursor = await admin(t, "GET", "/api/admin/webhooks?cursor=bm9wZQ");
    expect(cursor.statusCode).toBe(400);
    expect(cursor.json().code).toBe("invalid_cursor");
    const stray = await admin(t, "GET", "/api/admin/webhooks?limt=5");
    expect(stray.statusCode).toBe(400);
    expect(stray.json()).toMatchObject({ code: "unknown_field", field: "querystring.limt" });
  });

  it("updates only the given fields and bumps updatedAt", async () => {
    const created = await createEndpoint(t, { events: ["ROOM_CREATED"] });
    await nextMillisecond();
    const res = await admin(t, "PATCH", `/api/admin/webhooks/${created.id}`, {
      name: "Renamed",
      events: ["ROOM_DELETED", "ADMIN_ROOM_DELETED"],
      enabled: false,
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      id: created.id,
      name: "Renamed",
      url: created.url,
      events: ["ROOM_DELETED", "ADMIN_ROOM_DELETED"],
      enabled: false,
      createdAt: created.createdAt,
    });
    expect(Date.parse(body.updatedAt)).toBeGreaterThan(Date.parse(created.updatedAt));
    expect((await admin(t, "GET", `/api/admin/webhooks/${created.id}`)).json()).toEqual(body);
  });

  it("changes the url after checking it", async () => {
    const created = await createEndpoint(t);
    const ok = await admin(t, "PATCH", `/api/admin/webhooks/${created.id}`, {
      url: "https://other.example.net/in",
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().url).toBe("https://other.example.net/in");
    const bad = await admin(t, "PATCH", `/api/admin/webhooks/${created.id}`, {
      url: "ftp://other.example.net/in",
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe("url_scheme_not_allowed");
    expect((await admin(t, "GET", `/api/admin/webhooks/${created.id}`)).json().url).toBe(
      "https://other.example.net/in",
    );
  });

  it("re-encrypts a new secret on update", async () => {
    const created = await createEndpoint(t);
    const res = await admin(t, "PATCH", `/api/admin/webhooks/${created.id}`, {
      secret: "a-brand-new-secret-value",
    });
    expect(res.statusCode).toBe(200);
    const row = await t.ctx.db
      .selectFrom("webhooks")
      .select("secret_ciphertext")
      .where("id", "=", created.id)
      .executeTakeFirstOrThrow();
    expect(row.secret_ciphertext).not.toContain("a-brand-new-secret-value");
    expect(openSecret(t.ctx.keys.secretKey, row.secret_ciphertext)).toBe(
      "a-brand-new-secret-value",
    );
  });

  it("answers 200 unchanged for an empty PATCH, with or without a body", async () => {
    const created = await createEndpoint(t);
    await nextMillisecond();
    const empty = await admin(t, "PATCH", `/api/admin/webhooks/${created.id}`, {});
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toEqual(created);
    const none = await t.app.inject({
      method: "PATCH",
      url: `/api/admin/webhooks/${created.id}`,
      headers: t.admin.headers,
    });
    expect(none.statusCode).toBe(200);
    expect(none.json()).toEqual(created);
  });

  it("answers 404 not_found when patching, deleting or testing an unknown endpoint", async () => {
    for (const [method, url, payload] of [
      ["PATCH", "/api/admin/webhooks/999999", { name: "x" }],
      ["PATCH", "/api/admin/webhooks/999999", {}],
      ["DELETE", "/api/admin/webhooks/999999", undefined],
      ["POST", "/api/admin/webhooks/999999/test", undefined],
    ] as const) {
      const res = await admin(t, method, url, payload);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().code).toBe("not_found");
    }
  });

  it("deletes an endpoint: 204, then 404", async () => {
    const created = await createEndpoint(t);
    const res = await admin(t, "DELETE", `/api/admin/webhooks/${created.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe("");
    expect((await admin(t, "GET", `/api/admin/webhooks/${created.id}`)).statusCode).toBe(404);
    expect((await admin(t, "DELETE", `/api/admin/webhooks/${created.id}`)).statusCode).toBe(404);
  });

  describe("validation", () => {
    async function expectRefused(payload: Record<string, unknown>, code: string): Promise<void> {
      const before = await countRows(t, "webhooks");
      const res = await admin(t, "POST", "/api/admin/webhooks", payload);
      expect(res.statusCode, JSON.stringify(payload).slice(0, 200)).toBe(400);
      expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(res.json(), res.body).toMatchObject({ status: 400, code });
      expect(await countRows(t, "webhooks")).toBe(before);
    }

    it("answers invalid_name for an empty, blank or over-long name and accepts 200 characters", async () => {
      await expectRefused(endpointBody({ name: "" }), "invalid_name");
      await expectRefused(endpointBody({ name: "   " }), "invalid_name");
      await expectRefused(endpointBody({ name: "n".repeat(201) }), "invalid_name");
      const longest = await createEndpoint(t, { name: "é".repeat(200) });
      expect(longest.name).toBe("é".repeat(200));
    });

    it("answers invalid_url for a relative, malformed or credential-bearing url", async () => {
      await expectRefused(endpointBody({ url: "not a url" }), "invalid_url");
      await expectRefused(endpointBody({ url: "/hooks/parley" }), "invalid_url");
      await expectRefused(
        endpointBody({ url: "https://user:pass@hooks.example.com/" }),
        "invalid_url",
      );
      await expectRefused(
        endpointBody({ url: `https://hooks.example.com/${"a".repeat(2100)}` }),
        "invalid_url",
      );
    });

    it("answers url_scheme_not_allowed for a scheme other than https or http", async () => {
      await expectRefused(
        endpointBody({ url: "ftp://hooks.example.com/" }),
        "url_scheme_not_allowed",
      );
      await expectRefused(endpointBody({ url: "file:///etc/passwd" }), "url_scheme_not_allowed");
    });

    it("accepts http and loopback receivers when the settings allow them", async () => {
      const created = await createEndpoint(t, { url: "http://127.0.0.1:9000/hook" });
      expect(created.url).toBe("http://127.0.0.1:9000/hook");
    });

    it("answers invalid_secret below 16 or above 1024 characters and accepts both bounds", async () => {
      await expectRefused(endpointBody({ secret: "s".repeat(15) }), "invalid_secret");
      await expectRefused(endpointBody({ secret: "s".repeat(1025) }), "invalid_secret");
      await createEndpoint(t, { secret: "s".repeat(16) });
      await createEndpoint(t, { secret: "s".repeat(1024) });
    });

    it("answers invalid_events for an empty list, an unknown name, WEBHOOK_TEST or a duplicate", async () => {
      await expectRefused(endpointBody({ events: [] }), "invalid_events");
      await expectRefused(endpointBody({ events: ["MESSAGE_EXPLODED"] }), "invalid_events");
      await expectRefused(endpointBody({ events: ["WEBHOOK_TEST"] }), "invalid_events");
      await expectRefused(
        endpointBody({ events: ["ROOM_CREATED", "ROOM_CREATED"] }),
        "invalid_events",
      );
    });

    it("answers unknown_field naming a field the endpoint does not accept", async () => {
      const res = await admin(t, "POST", "/api/admin/webhooks", endpointBody({ secrett: SECRET }));
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: "unknown_field", field: "body.secrett" });
      const patch = await admin(t, "PATCH", "/api/admin/webhooks/1", { active: true });
      expect(patch.statusCode).toBe(400);
      expect(patch.json()).toMatchObject({ code: "unknown_field", field: "body.active" });
      const test = await admin(t, "POST", "/api/admin/webhooks/1/test", {
        events: "MESSAGE_CREATED",
      });
      expect(test.statusCode).toBe(400);
      expect(test.json()).toMatchObject({ code: "unknown_field", field: "body.events" });
    });

    it("answers validation_failed for a missing field or a wrong type", async () => {
      const { secret: _secret, ...withoutSecret } = endpointBody();
      await expectRefused(withoutSecret, "validation_failed");
      await expectRefused(endpointBody({ enabled: "maybe" }), "validation_failed");
      await expectRefused(endpointBody({ events: { MESSAGE_CREATED: true } }), "validation_failed");
      await expectRefused(endpointBody({ name: { text: "x" } }), "validation_failed");
    });

    it("checks only the given fields on PATCH, each with its own code", async () => {
      const created = await createEndpoint(t);
      for (const [payload, code] of [
        [{ name: "" }, "invalid_name"],
        [{ url: "nope" }, "invalid_url"],
        [{ secret: "short" }, "invalid_secret"],
        [{ events: [] }, "invalid_events"],
        [{ events: ["WEBHOOK_TEST"] }, "invalid_events"],
      ] as const) {
        const res = await admin(t, "PATCH", `/api/admin/webhooks/${created.id}`, payload);
        expect(res.statusCode).toBe(400);
        expect(res.json().code).toBe(code);
      }
      expect((await admin(t, "GET", `/api/admin/webhooks/${created.id}`)).json()).toEqual(created);
    });
  });
});

describeEachDialect("outbound webhook urls under strict settings on $name", (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect, {
      webhookAllowPrivateNetworks: false,
      webhookAllowHttp: false,
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    "https://127.0.0.1/hook",
    "https://10.0.0.1/hook",
    "https://[::1]/hook",
    "https://169.254.169.254/latest/meta-data/",
    "https://192.168.1.20:8443/hook",
    "https://100.64.0.1/hook",
    "https://localhost:8443/hook",
  ])("answers url_host_not_allowed for %s", async (url) => {
    const res = await admin(t, "POST", "/api/admin/webhooks", endpointBody({ url }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: "url_host_not_allowed", field: "body.url" });
  });

  it("answers url_scheme_not_allowed for http:// when http is not allowed", async () => {
    const res = await admin(
      t,
      "POST",
      "/api/admin/webhooks",
      endpointBody({ url: "http://hooks.example.com/parley" }),
    );
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe("url_scheme_not_allowed");
  });

  it("refuses a private address on PATCH too, and accepts a public https url", async () => {
    const created = await createEndpoint(t, { url: "https://hooks.example.com/parley" });
    const res = await admin(t, "PATCH", `/api/admin/webhooks/${created.id}`, {
      url: "https://10.1.2.3/hook",
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe("url_host_not_allowed");
    expect((await admin(t, "GET", `/api/admin/webhooks/${created.id}`)).json().url).toBe(
      "https://hooks.example.com/parley",
    );
  });
});
