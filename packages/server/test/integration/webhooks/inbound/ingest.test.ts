import type { InboundWebhookWithToken } from "@parley/client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../../helpers/build-app.js";
import { describeEachDialect } from "../../../helpers/dialects.js";
import { hashIngestToken } from "../../../../src/webhooks/inbound/ingest-token.js";
import { createRoom } from "../../../helpers/fixtures.js";
import { createWebhook, ingest, ingestPath, messagesOf, unknownToken } from "./inbound-helpers.js";

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Headers that legitimately differ between two requests. */
function comparableHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  const { date: _date, "request-id": _id, "ratelimit-reset": _reset, ...rest } = headers;
  return rest;
}

describeEachDialect("ingest on $name", (dialect) => {
  let t: TestApp;
  let hook: InboundWebhookWithToken;
  const events: Array<{ event: string; data: Record<string, unknown> }> = [];

  beforeAll(async () => {
    t = await createTestApp(dialect, { rateLimitWebhookIngest: "100000/1m" });
    t.ctx.spine.onEventCommitted((event, data) =>
      events.push({ event, data: data as Record<string, unknown> }),
    );
    hook = await createWebhook(t, {
      displayName: "Deploy Bot",
      avatarUrl: "https://example.com/bot.png",
    });
  });
  afterAll(async () => {
    await t.close();
  });

  const created = () => events.filter((e) => e.event === "MESSAGE_CREATED");

  it("posts a markdown message under the webhook's name and avatar and answers 200 {messageId, timestamp}", async () => {
    const before = created().length;
    const res = await ingest(t, hook.token, { content: "**deployed** v1.2.3" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(["messageId", "timestamp"]);
    expect(body.timestamp).toMatch(ISO);

    const row = await t.ctx.db
      .selectFrom("messages")
      .selectAll()
      .where("id", "=", body.messageId)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      room_id: hook.roomId,
      sender_user_id: null,
      inbound_webhook_id: hook.id,
      sender_display_name: "Deploy Bot",
      sender_avatar_url: "https://example.com/bot.png",
      content: "**deployed** v1.2.3",
      content_format: "markdown",
    });
    expect(new Date(row.created_at).toISOString()).toBe(body.timestamp);

    const fired = created().slice(before);
    expect(fired).toHaveLength(1);
    expect(fired[0]!.data).toEqual({
      roomId: hook.roomId,
      messageId: body.messageId,
      senderId: null,
      timestamp: body.timestamp,
      threadId: null,
      mentions: [],
      inboundWebhookId: hook.id,
    });
  });

  it("shows the message as sent by an integration on the message fetch route, when that route exists", async () => {
    const posted = (await ingest(t, hook.token, { content: "fetch me" })).json();
    const res = await t.app.inject({
      method: "GET",
      url: `/api/rooms/${hook.roomId}/messages/${posted.messageId}`,
      headers: t.admin.headers,
    });
    if (res.statusCode === 404 && res.json().code === "route_not_found") return;
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      id: posted.messageId,
      content: "fetch me",
      inboundWebhookId: hook.id,
      sender: {
        type: "integration",
        displayName: "Deploy Bot",
        avatarUrl: "https://example.com/bot.png",
      },
    });
  });

  it("stores 16384 bytes of 3-byte characters and refuses one byte more with content_too_large", async () => {
    // 5461 × 3 bytes = 16383, plus one ASCII byte = exactly 16384.
    const exact = "€".repeat(5461) + "a";
    expect(Buffer.byteLength(exact)).toBe(16384);
    const ok = await ingest(t, hook.token, { content: exact });
    expect(ok.statusCode).toBe(200);

    const over = "€".repeat(5461) + "ab";
    const before = created().length;
    const res = await ingest(t, hook.token, { content: over });
    expect(res.statusCode).toBe(400);
    expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 400, code: "content_too_large" });
    expect(created().length).toBe(before);
  });

  it("answers content_required for missing or empty content and for an empty body", async () => {
    for (const payload of [
      {},
      { content: "" },
      { contentFormat: "html" },
      { content: null },
      { content: 42 },
    ]) {
      const res = await ingest(t, hook.token, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().code).toBe("content_required");
    }
    const empty = await t.app.inject({ method: "POST", url: ingestPath(hook.token) });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().code).toBe("content_required");
  });

  it("answers validation_failed for a JSON body that is not an object", async () => {
    for (const payload of ["[1,2]", '"text"', "42", "null", "true"]) {
      const res = await ingest(t, hook.token, payload);
      expect(res.statusCode, payload).toBe(400);
      expect(res.json()).toMatchObject({ code: "validation_failed", field: "body" });
    }
  });

  it("answers invalid_content_format for an unknown contentFormat", async () => {
    const res = await ingest(t, hook.token, { content: "hi", contentFormat: "rtf" });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe("invalid_content_format");
  });

  it("ignores unknown fields in the body (senders are third-party tools)", async () => {
    const res = await ingest(t, hook.token, {
      content: "lenient",
      channel: "#ops",
      icon_emoji: ":ghost:",
    });
    expect(res.statusCode).toBe(200);
  });

  it("answers 400 invalid_json for malformed JSON", async () => {
    const res = await ingest(t, hook.token, '{"content": "half');
    expect(res.statusCode).toBe(400);
    expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(res.json().code).toBe("invalid_json");
  });

  it("answers 415 for a body that is not JSON", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/xml"]) {
      const res = await t.app.inject({
        method: "POST",
        url: ingestPath(hook.token),
        headers: { "content-type": type },
        payload: "content=hi",
      });
      expect(res.statusCode, type).toBe(415);
      expect(res.json().code).toBe("unsupported_media_type");
    }
  });

  it("answers 400 body_too_large for a 1 MB body and accepts one just under 64 KiB", async () => {
    const big = JSON.stringify({ content: "x".repeat(1024 * 1024) });
    const res = await ingest(t, hook.token, big);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe("body_too_large");

    // Padding in an ignored field: the body limit is 64 KiB, the content limit 16384 bytes.
    const padded = JSON.stringify({ content: "fits", padding: "p".repeat(64 * 1024 - 40) });
    expect(Buffer.byteLength(padded)).toBeLessThanOrEqual(64 * 1024);
    expect((await ingest(t, hook.token, padded)).statusCode).toBe(200);
  });

  it("answers a disabled token exactly as an unknown one: status, headers and body", async () => {
    const disabled = await createWebhook(t, { displayName: "Off" });
    const patch = await t.app.inject({
      method: "PATCH",
      url: `/api/admin/inbound-webhooks/${disabled.id}`,
      headers: t.admin.headers,
      payload: { enabled: false },
    });
    expect(patch.json().enabled).toBe(false);

    const a = await ingest(t, unknownToken(), { content: "hello" });
    const b = await ingest(t, disabled.token, { content: "hello" });
    expect(a.statusCode).toBe(404);
    expect(b.statusCode).toBe(404);
    expect(b.body).toBe(a.body);
    expect(comparableHeaders(b.headers)).toEqual(comparableHeaders(a.headers));
    expect(a.json()).toMatchObject({ code: "not_found", status: 404 });
    expect(a.body).not.toContain(disabled.token);

    // Also for a malformed token and for a webhook whose room was deleted.
    const malformed = await ingest(t, "not-a-token", { content: "hello" });
    expect(malformed.body).toBe(a.body);
    const orphan = await createWebhook(t);
    await t.ctx.db
      .updateTable("rooms")
      .set({ deleted_at: Date.now() })
      .where("id", "=", orphan.roomId)
      .execute();
    const gone = await ingest(t, orphan.token, { content: "hello" });
    expect(gone.statusCode).toBe(404);
    expect(gone.body).toBe(a.body);
    expect(comparableHeaders(gone.headers)).toEqual(comparableHeaders(a.headers));
  });

  it("stops the old token at once on rotation and posts with the new one", async () => {
    const rotating = await createWebhook(t, { displayName: "Rotating" });
    expect((await ingest(t, rotating.token, { content: "before" })).statusCode).toBe(200);
    const res = await t.app.inject({
      method: "POST",
      url: `/api/admin/inbound-webhooks/${rotating.id}/rotate-token`,
      headers: t.admin.headers,
    });
    expect(res.statusCode).toBe(200);
    const rotated = res.json();
    expect(rotated.token).not.toBe(rotating.token);
    expect(rotated.id).toBe(rotating.id);
    expect((await ingest(t, rotating.token, { content: "old" })).statusCode).toBe(404);
    expect((await ingest(t, rotated.token, { content: "new" })).statusCode).toBe(200);
    const row = await t.ctx.db
      .selectFrom("inbound_webhooks")
      .selectAll()
      .where("id", "=", rotating.id)
      .executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(hashIngestToken(rotated.token));
    expect(row.token_last8).toBe(rotated.token.slice(-8));
  });

  it("stops a token at once when another process disables, rotates or deletes it, though its lookup is cached", async () => {
    // Written straight to the database, as the CLI or a second server would: this process's
    // cache is not told, and the post's own check is what refuses.
    const other = await createWebhook(t, { displayName: "Elsewhere" });
    const reference = await ingest(t, unknownToken(), { content: "hello" });
    const change = (set: { enabled?: 0 | 1; token_hash?: string }) =>
      t.ctx.db.updateTable("inbound_webhooks").set(set).where("id", "=", other.id).execute();
    const refused = async () => {
      const res = await ingest(t, other.token, { content: "refused" });
      expect(res.statusCode).toBe(404);
      expect(res.body).toBe(reference.body);
    };
    const before = (await messagesOf(t, other.roomId)).length;
    expect((await ingest(t, other.token, { content: "cached" })).statusCode).toBe(200);
    await change({ enabled: 0 });
    await refused();
    await change({ enabled: 1 });
    expect((await ingest(t, other.token, { content: "again" })).statusCode).toBe(200);
    await change({ token_hash: hashIngestToken(unknownToken()) });
    await refused();
    await change({ token_hash: hashIngestToken(other.token) });
    expect((await ingest(t, other.token, { content: "restored" })).statusCode).toBe(200);
    await t.ctx.db.deleteFrom("inbound_webhooks").where("id", "=", other.id).execute();
    await refused();
    expect((await messagesOf(t, other.roomId)).length).toBe(before + 3);

    // Its room deleted after the lookup was cached: the post's room check refuses, writing nothing.
    const orphaned = await createWebhook(t);
    expect((await ingest(t, orphaned.token, { content: "cached" })).statusCode).toBe(200);
    await t.ctx.db
      .updateTable("rooms")
      .set({ deleted_at: Date.now() })
      .where("id", "=", orphaned.roomId)
      .execute();
    const deliveries = await t.ctx.db
      .selectFrom("webhook_deliveries")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    const gone = await ingest(t, orphaned.token, { content: "refused" });
    expect(gone.statusCode).toBe(404);
    expect(gone.body).toBe(reference.body);
    expect((await messagesOf(t, orphaned.roomId)).length).toBe(1);
    expect(
      await t.ctx.db
        .selectFrom("webhook_deliveries")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow(),
    ).toEqual(deliveries);
  });

  it("answers 404 once the webhook is deleted", async () => {
    const doomed = await createWebhook(t);
    const del = await t.app.inject({
      method: "DELETE",
      url: `/api/admin/inbound-webhooks/${doomed.id}`,
      headers: t.admin.headers,
    });
    expect(del.statusCode).toBe(204);
    expect((await ingest(t, doomed.token, { content: "hi" })).statusCode).toBe(404);
  });

  it("sanitizes html content before storing it: no script, no event handlers, no javascript: urls", async () => {
    const roomId = (await createRoom(t)).id;
    const html = await createWebhook(t, { roomId });
    const res = await ingest(t, html.token, {
      contentFormat: "html",
      content:
        '<p onclick="steal()">Build <b>passed</b></p><script>alert(1)</script><a href="javascript:alert(2)">x</a><img src="https://example.com/a.png" onerror="alert(3)"><a href="https://ci.example.com/42">run</a>',
    });
    expect(res.statusCode).toBe(200);
    const [row] = await messagesOf(t, roomId);
    expect(row!.content_format).toBe("html");
    expect(row!.content).toContain("<b>passed</b>");
    expect(row!.content).toContain('href="https://ci.example.com/42"');
    expect(row!.content).not.toMatch(/<script|onclick|onerror|javascript:|alert\(1\)/i);
  });

  it("answers 422 dlp_blocked with the rule id, stores nothing and fires nothing", async () => {
    const roomId = (await createRoom(t)).id;
    const guarded = await createWebhook(t, { roomId });
    const before = events.length;
    const res = await ingest(t, guarded.token, { content: "card 4111 1111 1111 1111 exp 12/30" });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: "dlp_blocked", ruleId: "payment_card" });
    expect(await messagesOf(t, roomId)).toHaveLength(0);
    expect(events.length).toBe(before);
  });

  it("refuses a NUL character with validation_failed on every database", async () => {
    const res = await ingest(t, hook.token, { content: "a\u0000b" });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: "validation_failed", field: "body.content" });
  });

  it("fires MESSAGE_CREATED exactly once per post", async () => {
    const roomId = (await createRoom(t)).id;
    const counted = await createWebhook(t, { roomId });
    const before = created().length;
    const ids: number[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await ingest(t, counted.token, { content: `n${i}` })).json().messageId);
    const fired = created().slice(before);
    expect(fired.map((e) => e.data.messageId)).toEqual(ids);
    expect(
      fired.every((e) => e.data.senderId === null && e.data.inboundWebhookId === counted.id),
    ).toBe(true);
  });
});
