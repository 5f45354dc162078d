import crypto from "node:crypto";
import { DiscordAPIError, EmbedBuilder, WebhookClient } from "discord.js";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../../helpers/build-app.js";
import { createRoom } from "../../../helpers/fixtures.js";
import { TEST_REDIS_URL } from "../../../helpers/services.js";
import { describeEachDialect, SQLITE } from "../../../helpers/dialects.js";
import { listeningApp } from "../../../helpers/listening-app.js";
import { recordEvents } from "../../chat/chat-helpers.js";
import { createWebhook, ingest, messagesOf, unknownToken } from "./inbound-helpers.js";

const VISA_TEST_CARD = "4111 1111 1111 1111";

/**
 * discord.js is the sender: its WebhookClient, with its REST base address moved from
 * https://discord.com/api to Parley's Discord-compatible prefix. (WebhookClient({url}) accepts
 * only discord.com addresses, so the client takes the id and token, as tools built on it do.)
 */
describeEachDialect("the Discord-compatible route with discord.js on $name", (dialect) => {
  const server = listeningApp(dialect, { rateLimitWebhookIngest: "100000/1m" });
  const clients: WebhookClient[] = [];
  afterEach(() => {
    for (const client of clients.splice(0)) client.destroy();
  });

  const discord = (hook: { id: number; token: string }, version = 10) => {
    const client = new WebhookClient(
      { id: String(hook.id), token: hook.token },
      {
        rest: { api: `${server.origin}/api/public/discord`, version: String(version), retries: 0 },
      },
    );
    clients.push(client);
    return client;
  };
  const stored = (messageId: number) =>
    server.t.ctx.db
      .selectFrom("messages")
      .selectAll()
      .where("id", "=", messageId)
      .executeTakeFirstOrThrow();
  const thrown = async (work: Promise<unknown>): Promise<DiscordAPIError> => {
    const error = await work.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DiscordAPIError);
    return error as DiscordAPIError;
  };

  describe("send", () => {
    it("posts the content under the webhook's name and answers a Discord message object", async () => {
      const hook = await createWebhook(server.t, { displayName: "Uptime Kuma" });
      const seen = recordEvents(server.t);
      const sent = await discord(hook).send({ content: "Service **api** is down" });
      seen.stop();
      expect(sent).toMatchObject({
        id: expect.stringMatching(/^\d+$/),
        channel_id: String(hook.roomId),
        content: "Service **api** is down",
        webhook_id: String(hook.id),
        author: { username: "Uptime Kuma" },
        edited_timestamp: null,
      });
      expect(new Date(sent.timestamp).toISOString()).toBe(sent.timestamp);
      const row = await stored(Number(sent.id));
      expect(row).toMatchObject({
        room_id: hook.roomId,
        inbound_webhook_id: hook.id,
        sender_display_name: "Uptime Kuma",
        content: "Service **api** is down",
        content_format: "markdown",
      });
      expect(seen.events.map(([name]) => name)).toEqual(["MESSAGE_CREATED"]);
    });

    it("takes every API version from v6 to v10", async () => {
      const hook = await createWebhook(server.t);
      for (const version of [6, 7, 8, 9, 10]) {
        const sent = await discord(hook, version).send({ content: `v${version}` });
        expect(sent.content).toBe(`v${version}`);
      }
      const other = await thrown(discord(hook, 5).send({ content: "v5" }));
      expect([other.status, other.code]).toEqual([400, 50041]);
      expect((await messagesOf(server.t, hook.roomId)).map((m) => m.content)).toEqual([
        "v6",
        "v7",
        "v8",
        "v9",
        "v10",
      ]);
    });

    it("renders embeds to markdown after the content", async () => {
      const hook = await createWebhook(server.t);
      const embed = new EmbedBuilder()
        .setTitle("CPU above 90%")
        .setURL("https://grafana.example.com/d/cpu")
        .setDescription("host **web-1** for 5 minutes")
        .setColor(0xff0000)
        .setAuthor({ name: "Grafana", url: "https://grafana.example.com" })
        .addFields(
          { name: "Value", value: "93%", inline: true },
          { name: "Runbook", value: "restart it" },
        )
        .setFooter({ text: "alertmanager" })
        .setTimestamp(new Date("2026-11-27T10:00:00.000Z"));
      const sent = await discord(hook).send({
        content: "Alert",
        embeds: [embed, { description: "second" }],
      });
      expect(sent.content).toBe(
        [
          "Alert",
          [
            "_[Grafana](https://grafana.example.com)_",
            "🔴 **[CPU above 90%](https://grafana.example.com/d/cpu)**",
            "host **web-1** for 5 minutes",
            "**Value**: 93%",
            "**Runbook**\nrestart it",
            "_alertmanager · 2026-11-27T10:00:00.000Z_",
          ].join("\n"),
          "second",
        ].join("\n\n"),
      );
      expect((await stored(Number(sent.id))).content).toBe(sent.content);
    });

    it("uses username and avatar_url only when the webhook allows overrides", async () => {
      const strict = await createWebhook(server.t, { displayName: "CI" });
      const open = await createWebhook(server.t, { displayName: "CI", allowOverrides: true });
      const overrides = {
        content: "deployed",
        username: "Deploy Bot",
        avatarURL: "https://example.com/deploy.png",
      };
      const kept = await discord(strict).send(overrides);
      const taken = await discord(open).send(overrides);
      expect(kept.author.username).toBe("CI");
      expect(taken.author.username).toBe("Deploy Bot");
      expect(await stored(Number(kept.id))).toMatchObject({
        sender_display_name: "CI",
        sender_avatar_url: null,
      });
      expect(await stored(Number(taken.id))).toMatchObject({
        sender_display_name: "Deploy Bot",
        sender_avatar_url: "https://example.com/deploy.png",
      });
    });

    it("posts a reply with thread_id and refuses a thread that is not one of the room", async () => {
      const hook = await createWebhook(server.t);
      const client = discord(hook);
      const top = await client.send({ content: "deploy started" });
      const reply = await client.send({ content: "step 1 done", threadId: top.id });
      expect((await stored(Number(reply.id))).thread_id).toBe(Number(top.id));
      const other = await createWebhook(server.t);
      const elsewhere = await discord(other).send({ content: "other room" });
      const refused = await thrown(client.send({ content: "lost", threadId: elsewhere.id }));
      expect([refused.status, refused.code]).toEqual([400, 50035]);
      expect(refused.rawError).toMatchObject({
        errors: { thread_id: { _errors: [{ code: "THREAD_INVALID" }] } },
      });
    });

    it("answers 204 without wait=true", async () => {
      const hook = await createWebhook(server.t);
      const res = await fetch(
        `${server.origin}/api/public/discord/v10/webhooks/${hook.id}/${hook.token}`,
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ content: "fire and forget" }),
        },
      );
      expect(res.status).toBe(204);
      expect(await res.text()).toBe("");
      expect((await messagesOf(server.t, hook.roomId)).map((m) => m.content)).toEqual([
        "fire and forget",
      ]);
    });

    it("takes multipart with payload_json, and refuses file parts with 400, posting nothing", async () => {
      const hook = await createWebhook(server.t);
      const url = `${server.origin}/api/public/discord/v10/webhooks/${hook.id}/${hook.token}?wait=true`;
      const form = new FormData();
      form.set("payload_json", JSON.stringify({ content: "from a form" }));
      const res = await fetch(url, { method: "POST", body: form });
      expect(res.status).toBe(200);
      expect((await res.json()).content).toBe("from a form");

      const refused = await thrown(
        discord(hook).send({
          content: "with a file",
          files: [{ attachment: Buffer.from("log"), name: "log.txt" }],
        }),
      );
      expect([refused.status, refused.code]).toEqual([400, 50035]);
      expect((await messagesOf(server.t, hook.roomId)).map((m) => m.content)).toEqual([
        "from a form",
      ]);
    });
  });

  describe("Idempotency-Key", () => {
    it("posts once per key: discord.js sending twice with the key gets the first message back", async () => {
      const hook = await createWebhook(server.t);
      const client = new WebhookClient(
        { id: String(hook.id), token: hook.token },
        {
          rest: {
            api: `${server.origin}/api/public/discord`,
            retries: 0,
            headers: { "Idempotency-Key": "deploy-88-finished" },
          },
        },
      );
      clients.push(client);
      const first = await client.send({ content: "deploy 88 finished" });
      const again = await client.send({ content: "deploy 88 finished" });
      expect(again).toEqual(first);
      expect((await messagesOf(server.t, hook.roomId)).map((m) => m.content)).toEqual([
        "deploy 88 finished",
      ]);
    });

    it("replays 204 and multipart posts by their message, not their boundary, and refuses another body with the key", async () => {
      const hook = await createWebhook(server.t);
      const url = `${server.origin}/api/public/discord/v10/webhooks/${hook.id}/${hook.token}`;
      const send = (content: string, key: string) => {
        const form = new FormData();
        form.set("payload_json", JSON.stringify({ content }));
        return fetch(url, { method: "POST", headers: { "idempotency-key": key }, body: form });
      };
      const first = await send("nightly backup done", "backup-2026-11-27");
      const replay = await send("nightly backup done", "backup-2026-11-27");
      expect([first.status, replay.status]).toEqual([204, 204]);
      expect(first.headers.get("idempotent-replayed")).toBeNull();
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      const other = await send("nightly backup FAILED", "backup-2026-11-27");
      expect(other.status).toBe(422);
      expect(await other.json()).toEqual({ message: expect.any(String), code: 0 });
      const badKey = await send("x", "é");
      expect(badKey.status).toBe(400);
      expect((await messagesOf(server.t, hook.roomId)).map((m) => m.content)).toEqual([
        "nightly backup done",
      ]);
    });
  });

  describe("fetchMessage, editMessage, deleteMessage", () => {
    it("reads, edits and deletes the webhook's own message", async () => {
      const hook = await createWebhook(server.t, { displayName: "CI" });
      const client = discord(hook);
      const sent = await client.send({ content: "build #7 running" });

      const fetched = await client.fetchMessage(sent.id);
      expect(fetched).toMatchObject({
        id: sent.id,
        content: "build #7 running",
        author: { username: "CI" },
      });

      const seen = recordEvents(server.t);
      const edited = await client.editMessage(sent.id, {
        content: "build #7 passed",
        embeds: [{ title: "Logs", url: "https://ci.example.com/7" }],
      });
      seen.stop();
      expect(edited).toMatchObject({
        id: sent.id,
        content: "build #7 passed\n\n**[Logs](https://ci.example.com/7)**",
        edited_timestamp: expect.any(String),
      });
      expect(await stored(Number(sent.id))).toMatchObject({ content: edited.content, revision: 2 });
      expect(seen.events.map(([name]) => name)).toEqual(["MESSAGE_UPDATED"]);

      await client.deleteMessage(sent.id);
      expect(await stored(Number(sent.id))).toMatchObject({
        content: "",
        deleted_at: expect.anything(),
      });
      const gone = await thrown(client.fetchMessage(sent.id));
      expect([gone.status, gone.code]).toEqual([404, 10008]);
    });

    it("answers 10008 Unknown Message for another webhook's message, and changes nothing", async () => {
      const hook = await createWebhook(server.t);
      const other = await createWebhook(server.t, { roomId: hook.roomId });
      const theirs = await discord(other).send({ content: "theirs" });
      const client = discord(hook);
      for (const attempt of [
        () => client.fetchMessage(theirs.id),
        () => client.editMessage(theirs.id, { content: "taken over" }),
        () => client.deleteMessage(theirs.id),
        () => client.fetchMessage("999999999"),
      ]) {
        const error = await thrown(attempt());
        expect([error.status, error.code, error.message]).toEqual([404, 10008, "Unknown Message"]);
      }
      expect(await stored(Number(theirs.id))).toMatchObject({
        content: "theirs",
        deleted_at: null,
      });
    });
  });

  describe("errors in Discord's shape", () => {
    it("answers the same 10015 Unknown Webhook for an unknown id, an unknown token and another webhook's token", async () => {
      const hook = await createWebhook(server.t);
      const other = await createWebhook(server.t);
      const disabled = await createWebhook(server.t, { enabled: false });
      const cases = [
        { id: 999_999, token: hook.token },
        { id: hook.id, token: unknownToken() },
        { id: hook.id, token: other.token },
        { id: disabled.id, token: disabled.token },
        { id: hook.id, token: "short" },
      ];
      for (const credentials of cases) {
        const error = await thrown(discord(credentials).send({ content: "x" }));
        expect([error.status, error.code, error.message]).toEqual([404, 10015, "Unknown Webhook"]);
      }
      expect(await messagesOf(server.t, hook.roomId)).toEqual([]);
    });

    it("answers 50035 Invalid Form Body naming the fields, and 50006 for an empty message", async () => {
      const hook = await createWebhook(server.t);
      const url = `${server.origin}/api/public/discord/v10/webhooks/${hook.id}/${hook.token}`;
      const post = (body: unknown) =>
        fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const bad = await post({
        content: 5,
        embeds: Array.from({ length: 11 }, () => ({ title: "t" })),
      });
      expect(bad.status).toBe(400);
      expect(await bad.json()).toEqual({
        message: "Invalid Form Body",
        code: 50035,
        errors: {
          content: { _errors: [{ code: "BASE_TYPE_STRING", message: "Must be a string." }] },
          embeds: {
            _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 10 or fewer in length." }],
          },
        },
      });
      const field = await post({ embeds: [{ fields: [{ name: "only a name" }] }] });
      expect(await field.json()).toMatchObject({
        code: 50035,
        errors: {
          embeds: {
            "0": { fields: { "0": { value: { _errors: [{ code: "BASE_TYPE_REQUIRED" }] } } } },
          },
        },
      });
      const empty = await thrown(discord(hook).send({ content: "", embeds: [] }));
      expect([empty.status, empty.code]).toEqual([400, 50006]);
      const broken = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{",
      });
      expect([broken.status, (await broken.json()).code]).toEqual([400, 50109]);
      const tooLarge = await thrown(discord(hook).send({ content: "x".repeat(16_385) }));
      expect([tooLarge.status, tooLarge.code]).toEqual([400, 50035]);
      const huge = await post({ content: "x".repeat(70 * 1024) });
      expect([huge.status, await huge.json()]).toEqual([
        413,
        { message: "Request entity too large", code: 40005 },
      ]);
      const text = await fetch(url, {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: "hello",
      });
      expect([text.status, await text.json()]).toEqual([
        415,
        { message: "send the body as application/json or multipart/form-data", code: 0 },
      ]);
      expect(await messagesOf(server.t, hook.roomId)).toEqual([]);
    });

    it("applies ingest's DLP to the content and to embeds", async () => {
      const hook = await createWebhook(server.t);
      for (const payload of [
        { content: `card ${VISA_TEST_CARD}` },
        { embeds: [{ description: `card ${VISA_TEST_CARD}` }] },
      ]) {
        const error = await thrown(discord(hook).send(payload));
        expect([error.status, error.code]).toEqual([422, 200000]);
      }
      expect(await messagesOf(server.t, hook.roomId)).toEqual([]);
    });
  });
});

describe("the Discord-compatible route's rate limit with discord.js", () => {
  const server = listeningApp(SQLITE, { rateLimitWebhookIngest: "3/2s" });

  it("shares ingest's bucket, answers 429 {message, retry_after, global} with Retry-After and X-RateLimit-*, and discord.js retries after it: the message arrives", async () => {
    const hook = await createWebhook(server.t);
    const client = new WebhookClient(
      { id: String(hook.id), token: hook.token },
      { rest: { api: `${server.origin}/api/public/discord`, retries: 0 } },
    );
    try {
      // The bucket is ingest's: two native posts and one raw Discord post use it up.
      expect((await ingest(server.t, hook.token, { content: "native 1" })).statusCode).toBe(200);
      expect((await ingest(server.t, hook.token, { content: "native 2" })).statusCode).toBe(200);
      const url = `${server.origin}/api/public/discord/v10/webhooks/${hook.id}/${hook.token}`;
      const post = (content: string) =>
        fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ content }),
        });
      const last = await post("raw");
      expect(last.status).toBe(204);
      expect(last.headers.get("x-ratelimit-limit")).toBe("3");
      expect(last.headers.get("x-ratelimit-remaining")).toBe("0");
      const limited = await post("refused");
      expect(limited.status).toBe(429);
      const body = await limited.json();
      expect(body).toEqual({
        message: "You are being rate limited.",
        retry_after: expect.any(Number),
        global: false,
      });
      expect(body.retry_after).toBeGreaterThan(0);
      expect(Number(limited.headers.get("retry-after"))).toBe(body.retry_after);
      expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
      expect(Number(limited.headers.get("x-ratelimit-reset-after"))).toBeGreaterThan(0);
      expect(Number(limited.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000);
      expect(limited.headers.get("x-ratelimit-scope")).toBe("user");

      const limitedEvents: unknown[] = [];
      client.rest.on("rateLimited", (info) => limitedEvents.push(info));
      const started = Date.now();
      const sent = await client.send({ content: "after the wait" });
      expect(limitedEvents).toHaveLength(1);
      expect(Date.now() - started).toBeGreaterThanOrEqual(500);
      expect(sent.content).toBe("after the wait");
      expect((await messagesOf(server.t, hook.roomId)).map((m) => m.content)).toEqual([
        "native 1",
        "native 2",
        "raw",
        "after the wait",
      ]);
    } finally {
      client.destroy();
    }
  });
});

describe(
  "the Discord-compatible route's rate limit shared through Redis",
  { tags: ["redis"] },
  () => {
    const prefix = `parley-test-${crypto.randomBytes(6).toString("hex")}:`;
    let a: TestApp;
    let b: TestApp;
    beforeAll(async () => {
      const settings = {
        redisUrl: TEST_REDIS_URL,
        redisKeyPrefix: prefix,
        rateLimitWebhookIngest: "2/10s",
      };
      a = await createTestApp(SQLITE, settings);
      b = await createTestApp(SQLITE, settings);
    });
    afterAll(async () => {
      const redis = new Redis(TEST_REDIS_URL!);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
      await a?.close();
      await b?.close();
    });

    it("counts one token's Discord and native posts together across two app instances", async () => {
      const hook = await createWebhook(a);
      // The same webhook (same id) in the second instance's database, as two processes see one database.
      const row = await a.ctx.db
        .selectFrom("inbound_webhooks")
        .selectAll()
        .where("id", "=", hook.id)
        .executeTakeFirstOrThrow();
      const roomId = (await createRoom(b)).id;
      await b.ctx.db
        .insertInto("inbound_webhooks")
        .values({ ...row, room_id: roomId })
        .execute();
      const discordPost = (t: TestApp) =>
        t.app.inject({
          method: "POST",
          url: `/api/public/discord/v10/webhooks/${hook.id}/${hook.token}`,
          payload: { content: "shared" },
        });

      const first = await discordPost(a);
      const second = await ingest(b, hook.token, { content: "native" });
      const third = await discordPost(b);
      expect([first.statusCode, second.statusCode, third.statusCode]).toEqual([204, 200, 429]);
      expect(third.json()).toMatchObject({ message: "You are being rate limited.", global: false });
      expect(third.headers["x-ratelimit-remaining"]).toBe("0");
      expect(Number(third.headers["retry-after"])).toBeGreaterThan(0);
    });
  },
);
