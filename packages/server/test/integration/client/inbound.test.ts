import type { RequestError } from "@parley/client";
import { paginate, request } from "@parley/client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEachDialect } from "../../helpers/dialects.js";
import { startClientApp, type ClientApp } from "./client-app.js";

describeEachDialect("the client and the inbound webhooks API on $name", (dialect) => {
  let c: ClientApp;
  let roomId: number;
  beforeAll(async () => {
    c = await startClientApp(dialect);
    roomId = (await c.admin("POST /api/rooms", { name: "deploys" })).data.id;
  });
  afterAll(async () => {
    await c?.close();
  });
  const local = (url: string) => `${c.baseUrl}${new URL(url).pathname}`;

  it("creates an inbound webhook and posts through its URL without any other credential", async () => {
    const created = await c.admin("POST /api/admin/inbound-webhooks", {
      roomId,
      displayName: "CI",
      avatarUrl: "https://ci.example.com/logo.png",
    });
    expect(created.status).toBe(201);
    const hook = created.data;
    expect(hook.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(hook.tokenLast8).toBe(hook.token.slice(-8));
    expect(hook.url).toMatch(new RegExp(`/api/public/webhooks/ingest/${hook.token}$`));

    // The ingest URL works as a route of its own: nothing but the URL is needed. (The server
    // names its configured address in it; this test server listens on a random port.)
    const posted = await request(`POST ${local(hook.url)}`, { content: "build **green**" });
    expect(posted.status).toBe(200);
    const result = posted.data as { messageId: number; timestamp: string };
    const message = await c.admin("GET /api/rooms/{roomId}/messages/{messageId}", {
      roomId,
      messageId: result.messageId,
    });
    expect(message.data).toMatchObject({
      content: "build **green**",
      inboundWebhookId: hook.id,
      sender: { type: "integration", id: hook.id, displayName: "CI" },
    });

    const typed = await request("POST /api/public/webhooks/ingest/{token}", {
      baseUrl: c.baseUrl,
      token: hook.token,
      content: "<b>deployed</b>",
      contentFormat: "html",
    });
    expect(typed.data).toEqual({ messageId: expect.any(Number), timestamp: expect.any(String) });
  });

  it("posts a Slack payload and gets Slack's plain-text ok", async () => {
    const { data: hook } = await c.admin("POST /api/admin/inbound-webhooks", {
      roomId,
      displayName: "Slack-ish",
    });
    const answer = await request("POST /api/public/webhooks/ingest/{token}/slack", {
      baseUrl: c.baseUrl,
      token: hook.token,
      text: "hello from a *Slack* tool",
    });
    expect(answer.status).toBe(200);
    expect(answer.data).toBe("ok");
  });

  it("lists, pages, updates, rotates and deletes, never showing a token again", async () => {
    const made = [];
    for (let i = 0; i < 4; i++) {
      made.push(
        (await c.admin("POST /api/admin/inbound-webhooks", { roomId, displayName: `bot ${i}` }))
          .data,
      );
    }
    const listed = [];
    for await (const page of paginate(c.admin, "GET /api/admin/inbound-webhooks", {
      roomId,
      limit: 2,
    })) {
      expect(page.items.length).toBeLessThanOrEqual(2);
      listed.push(...page.items);
    }
    expect(listed.map((h) => h.id)).toEqual(expect.arrayContaining(made.map((h) => h.id)));
    expect(JSON.stringify(listed)).not.toMatch(/"token"|"url"/);

    const first = made[0]!;
    const patched = await c.admin("PATCH /api/admin/inbound-webhooks/{id}", {
      id: first.id,
      displayName: "renamed",
      enabled: false,
    });
    expect(patched.data).toMatchObject({ displayName: "renamed", enabled: false });
    const disabled = (await request("POST /api/public/webhooks/ingest/{token}", {
      baseUrl: c.baseUrl,
      token: first.token,
      content: "x",
    }).catch((e: unknown) => e)) as RequestError;
    expect(disabled.status).toBe(404);
    expect(disabled.code).toBe("not_found");
    expect(disabled.request.url).toBe(`${c.baseUrl}/api/public/webhooks/ingest/[REDACTED]`);
    expect(`${disabled.message}${JSON.stringify(disabled)}`).not.toContain(first.token);

    const second = made[1]!;
    const rotated = await c.admin("POST /api/admin/inbound-webhooks/{id}/rotate-token", {
      id: second.id,
    });
    expect(rotated.data.token).not.toBe(second.token);
    const old = (await request(`POST ${local(second.url)}`, { content: "x" }).catch(
      (e: unknown) => e,
    )) as RequestError;
    expect(old.status).toBe(404);
    expect((await request(`POST ${local(rotated.data.url)}`, { content: "fresh" })).status).toBe(
      200,
    );

    expect(
      (await c.admin("GET /api/admin/inbound-webhooks/{id}", { id: second.id })).data.tokenLast8,
    ).toBe(rotated.data.token.slice(-8));
    expect(
      (await c.admin("DELETE /api/admin/inbound-webhooks/{id}", { id: second.id })).status,
    ).toBe(204);
  });

  it("reports ingest errors with their codes", async () => {
    const { data: hook } = await c.admin("POST /api/admin/inbound-webhooks", {
      roomId,
      displayName: "errors",
    });
    const ingest = (content: string) =>
      request("POST /api/public/webhooks/ingest/{token}", {
        baseUrl: c.baseUrl,
        token: hook.token,
        content,
      }).catch((e: unknown) => e as RequestError);
    expect(((await ingest("")) as RequestError).code).toBe("content_required");
    expect(((await ingest("x".repeat(16_385))) as RequestError).code).toBe("content_too_large");
    const dlp = (await ingest("card 4111 1111 1111 1111")) as RequestError;
    expect(dlp.status).toBe(422);
    expect(dlp.code).toBe("dlp_blocked");
  });
});
