import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../../helpers/build-app.js";
import { describeEachDialect } from "../../../helpers/dialects.js";
import { createRoom } from "../../../helpers/fixtures.js";
import {
  createWebhook,
  ingestPath,
  ingestSlack,
  messagesOf,
  unknownToken,
} from "./inbound-helpers.js";
import { ALERTMANAGER_PAYLOAD } from "./slack-payloads.js";

function form(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

describeEachDialect("Slack-compatible ingest on $name", (dialect) => {
  let t: TestApp;
  const events: Array<{ event: string; data: Record<string, unknown> }> = [];

  beforeAll(async () => {
    t = await createTestApp(dialect, { rateLimitWebhookIngest: "100000/1m" });
    t.ctx.spine.onEventCommitted((event, data) =>
      events.push({ event, data: data as Record<string, unknown> }),
    );
  });
  afterAll(async () => {
    await t.close();
  });

  async function freshHook(body: Record<string, unknown> = {}) {
    const roomId = (await createRoom(t)).id;
    return createWebhook(t, {
      roomId,
      displayName: "Alerts",
      avatarUrl: "https://example.com/alerts.png",
      ...body,
    });
  }

  it("posts a JSON payload and answers 200 ok in text/plain, firing MESSAGE_CREATED once", async () => {
    const hook = await freshHook();
    const before = events.length;
    const res = await ingestSlack(t, hook.token, {
      text: "Hello from *Slack* <https://x.example|tools>",
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    expect(res.body).toBe("ok");
    const [row] = await messagesOf(t, hook.roomId);
    expect(row).toMatchObject({
      content: "Hello from **Slack** [tools](https://x.example)",
      content_format: "markdown",
      sender_user_id: null,
      inbound_webhook_id: hook.id,
      sender_display_name: "Alerts",
      sender_avatar_url: "https://example.com/alerts.png",
    });
    const fired = events.slice(before).filter((e) => e.event === "MESSAGE_CREATED");
    expect(fired).toHaveLength(1);
    expect(fired[0]!.data).toMatchObject({
      messageId: row!.id,
      senderId: null,
      inboundWebhookId: hook.id,
    });
  });

  it("renders :tada: in a Slack post as its emoji in contentHtml and contentText, keeping the content as sent", async () => {
    const hook = await freshHook();
    const res = await ingestSlack(t, hook.token, { text: "Deployed :tada: `:tada:`" });
    expect(res.statusCode).toBe(200);
    const [row] = await messagesOf(t, hook.roomId);
    const fetched = await t.app.inject({
      method: "GET",
      url: `/api/rooms/${hook.roomId}/messages/${row!.id}`,
      headers: { ...t.admin.headers, accept: "application/vnd.parley.v3.full+json" },
    });
    expect(fetched.statusCode).toBe(200);
    const message = fetched.json();
    expect(message.content).toBe("Deployed :tada: `:tada:`");
    expect(message.contentHtml).toBe("<p>Deployed 🎉 <code>:tada:</code></p>\n");
    expect(message.contentText).toBe("Deployed 🎉 :tada:");
  });

  it("accepts form-encoded payload=<json>, and raw JSON sent with a form content type (curl -d)", async () => {
    const hook = await freshHook();
    const encoded = await t.app.inject({
      method: "POST",
      url: ingestPath(hook.token, true),
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: form({ payload: JSON.stringify({ text: "from a form & more" }) }),
    });
    expect(encoded.statusCode).toBe(200);
    expect(encoded.body).toBe("ok");
    const curl = await t.app.inject({
      method: "POST",
      url: ingestPath(hook.token, true),
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: '{"text":"a+b & c"}',
    });
    expect(curl.statusCode).toBe(200);
    expect((await messagesOf(t, hook.roomId)).map((m) => m.content)).toEqual([
      "from a form & more",
      "a+b & c",
    ]);
  });

  it("renders an Alertmanager payload's attachment to markdown", async () => {
    const hook = await freshHook();
    expect((await ingestSlack(t, hook.token, ALERTMANAGER_PAYLOAD)).body).toBe("ok");
    const [row] = await messagesOf(t, hook.roomId);
    expect(row!.content).toMatch(
      /^🔴 \*\*\[\\\[FIRING:1\\\] HighLatency api \(critical\)\]\(http:\/\/alertmanager:9093\/#\/alerts\?receiver=slack\)\*\*\n\*\*Alert:\*\*/,
    );
    // username is asked for, but this webhook does not allow overrides.
    expect(row!.sender_display_name).toBe("Alerts");
  });

  it("honours username and icon_url only when the webhook allows overrides", async () => {
    const payload = {
      text: "override?",
      username: "Impostor",
      icon_url: "https://evil.example/i.png",
    };
    const strict = await freshHook();
    await ingestSlack(t, strict.token, payload);
    expect((await messagesOf(t, strict.roomId))[0]).toMatchObject({
      sender_display_name: "Alerts",
      sender_avatar_url: "https://example.com/alerts.png",
    });

    const open = await freshHook({ allowOverrides: true });
    await ingestSlack(t, open.token, payload);
    await ingestSlack(t, open.token, { text: "no override given" });
    await ingestSlack(t, open.token, {
      text: "bad icon",
      username: "Named",
      icon_url: "javascript:alert(1)",
    });
    const rows = await messagesOf(t, open.roomId);
    expect(rows.map((r) => [r.sender_display_name, r.sender_avatar_url])).toEqual([
      ["Impostor", "https://evil.example/i.png"],
      ["Alerts", "https://example.com/alerts.png"],
      ["Named", "https://example.com/alerts.png"],
    ]);
    expect(rows.every((r) => r.inbound_webhook_id === open.id && r.sender_user_id === null)).toBe(
      true,
    );
  });

  it("answers 404 no_service for unknown and disabled tokens alike", async () => {
    const disabled = await freshHook({ enabled: false });
    const a = await ingestSlack(t, unknownToken(), { text: "x" });
    const b = await ingestSlack(t, disabled.token, { text: "x" });
    expect([a.statusCode, a.body]).toEqual([404, "no_service"]);
    expect([b.statusCode, b.body]).toEqual([404, "no_service"]);
    const strip = (h: Record<string, unknown>) => {
      const { date: _d, "ratelimit-reset": _r, ...rest } = h;
      return rest;
    };
    expect(strip(b.headers)).toEqual(strip(a.headers));
  });

  it("answers Slack's codes in plain text for bad payloads", async () => {
    const hook = await freshHook();
    const cases: Array<[string, string, number, string]> = [
      ["application/json", '{"text": ', 400, "invalid_payload"],
      ["application/json", "[1,2]", 400, "invalid_payload"],
      ["application/json", "{}", 400, "no_text"],
      ["application/json", '{"text": "  ", "attachments": []}', 400, "no_text"],
      ["application/x-www-form-urlencoded", "text=hello", 400, "invalid_payload"],
      ["application/x-www-form-urlencoded", form({ payload: "{not json" }), 400, "invalid_payload"],
      ["text/plain", '{"text":"hi"}', 415, "unsupported_media_type"],
      [
        "application/json",
        JSON.stringify({ attachments: Array.from({ length: 101 }, () => ({ text: "a" })) }),
        400,
        "too_many_attachments",
      ],
    ];
    for (const [type, payload, status, code] of cases) {
      const res = await t.app.inject({
        method: "POST",
        url: ingestPath(hook.token, true),
        headers: { "content-type": type },
        payload,
      });
      expect([res.statusCode, res.body], `${type} ${payload.slice(0, 40)}`).toEqual([status, code]);
      expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    }
    expect(await messagesOf(t, hook.roomId)).toHaveLength(0);
  });

  it("answers 400 body_too_large for a 1 MB payload, JSON or form", async () => {
    const hook = await freshHook();
    const text = "x".repeat(1024 * 1024);
    const json = await ingestSlack(t, hook.token, { text });
    expect([json.statusCode, json.body]).toEqual([400, "body_too_large"]);
    const encoded = await t.app.inject({
      method: "POST",
      url: ingestPath(hook.token, true),
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: form({ payload: JSON.stringify({ text }) }),
    });
    expect([encoded.statusCode, encoded.body]).toEqual([400, "body_too_large"]);
  });

  it("applies DLP: 422 dlp_blocked, nothing stored, no event", async () => {
    const hook = await freshHook();
    const before = events.length;
    const res = await ingestSlack(t, hook.token, {
      attachments: [{ title: "leak", text: "key AKIAIOSFODNN7EXAMPLE here" }],
    });
    expect([res.statusCode, res.body]).toEqual([422, "dlp_blocked"]);
    expect(await messagesOf(t, hook.roomId)).toHaveLength(0);
    expect(events.length).toBe(before);
  });
});
