import { Parser } from "htmlparser2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postMessage } from "../../../src/chat/post-message.js";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { EVENT_NAMES } from "../../../src/events/event-catalogue.js";
import { createRoom, insertEndpoint } from "../../helpers/fixtures.js";
import { countRows, failFanOutAfterWriting, joinRoom, post, recordEvents } from "./chat-helpers.js";

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const VISA_TEST_CARD = "4111 1111 1111 1111";

/** Script tags, event-handler attributes and script URLs in markup, as a browser would parse it. */
function unsafeMarkup(html: string): string[] {
  const problems: string[] = [];
  if (/<script/i.test(html)) problems.push("<script");
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (["script", "iframe", "object", "embed", "svg", "math", "style"].includes(name))
          problems.push(`<${name}>`);
        for (const [attribute, value] of Object.entries(attributes)) {
          if (/^on/i.test(attribute)) problems.push(`${attribute}= on <${name}>`);
          // eslint-disable-next-line no-control-regex
          const url = value.replace(/[\u0000-\u0020\u007f-\u009f]/g, "").toLowerCase();
          if (/^(javascript|vbscript|data):/.test(url))
            problems.push(`${attribute}="${value}" on <${name}>`);
        }
      },
    },
    { decodeEntities: true, lowerCaseAttributeNames: true, lowerCaseTags: true },
  );
  parser.end(html);
  return problems;
}

const XSS_PAYLOADS = [
  "<script>alert(1)</script>",
  "<p>hello<script>alert(document.cookie)</script>world</p>",
  "<img src=x onerror=alert(1)>",
  '<img src="https://example.com/a.png" onerror="alert(1)">',
  "<svg onload=alert(1)>",
  '<a href="javascript:alert(1)">click</a>',
  '<a href="jav&#x09;ascript:alert(1)">tab</a>',
  '<div onmouseover="alert(1)">hover</div>',
  '<iframe src="javascript:alert(1)"></iframe>',
  "[click](javascript:alert(1))",
  "<scr<script>ipt>alert(1)</scr</script>ipt>",
];

describeEachDialect("messages on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let stranger: TestUser;
  let bot: TestUser;
  let roomId: number;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    alice = await t.user("user", "alice");
    bob = await t.user("user", "bob");
    stranger = await t.user("user", "stranger");
    bot = await t.user("bot", "robot");
    roomId = (await createRoom(t, alice, "general")).id;
    await joinRoom(t, bob, roomId);
  });
  afterAll(async () => {
    await t.close();
  });

  describe("POST /api/rooms/{roomId}/messages", () => {
    it("stores the message, answers 201 with its view and fires MESSAGE_CREATED once", async () => {
      const seen = recordEvents(t);
      const res = await post(t, alice, roomId, "hello **world**");
      seen.stop();
      expect(res.statusCode).toBe(201);
      const message = res.json();
      expect(message).toEqual({
        id: expect.any(Number),
        roomId,
        content: "hello **world**",
        contentFormat: "markdown",
        sender: {
          type: "user",
          id: alice.id,
          username: "alice",
          displayName: "alice",
          avatarUrl: null,
        },
        inboundWebhookId: null,
        moderationStatus: "none",
        createdAt: expect.stringMatching(ISO),
        threadId: null,
        replyCount: 0,
        lastReplyAt: null,
        revision: 1,
        editedAt: null,
        updatedAt: message.createdAt,
        reactions: [],
        files: [],
      });
      expect(seen.events).toEqual([
        [
          "MESSAGE_CREATED",
          {
            roomId,
            messageId: message.id,
            senderId: alice.id,
            timestamp: message.createdAt,
            threadId: null,
            mentions: [],
          },
        ],
      ]);
    });

    it("sanitizes HTML content before storing it", async () => {
      const res = await post(
        t,
        alice,
        roomId,
        '<p onclick="x()">hi<script>alert(1)</script></p>',
        "html",
      );
      expect(res.statusCode).toBe(201);
      expect(res.json().contentFormat).toBe("html");
      expect(res.json().content).toBe("<p>hi</p>");
    });

    it("accepts exactly 16384 UTF-8 bytes of multi-byte text and refuses 16385 with content_too_large", async () => {
      for (const [content, status] of [
        ["é".repeat(8192), 201],
        ["🦜".repeat(4096), 201],
        ["é".repeat(8192) + "a", 400],
        ["🦜".repeat(4096) + "a", 400],
        ["a".repeat(16385), 400],
      ] as const) {
        const res = await post(t, alice, roomId, content);
        expect(res.statusCode, `${content.length} characters`).toBe(status);
        if (status === 400)
          expect(res.json()).toMatchObject({
            code: "content_too_large",
            limit: 16384,
            size: 16385,
          });
      }
    });

    it("answers content_required, invalid_content_format and unknown_field like ingest does", async () => {
      const cases: Array<[unknown, string]> = [
        [{}, "content_required"],
        [{ content: "" }, "content_required"],
        [{ content: { text: "a" } }, "content_required"],
        [{ content: "hi", contentFormat: "rtf" }, "invalid_content_format"],
        [{ content: "hi", contentFormat: 1 }, "invalid_content_format"],
        [{ content: "hi", format: "html" }, "unknown_field"],
      ];
      for (const [payload, code] of cases) {
        const res = await t.app.inject({
          method: "POST",
          url: `/api/rooms/${roomId}/messages`,
          headers: alice.headers,
          payload: payload as object,
        });
        expect(res.statusCode, JSON.stringify(payload)).toBe(400);
        expect(res.json().code, JSON.stringify(payload)).toBe(code);
      }
      const noBody = await t.app.inject({
        method: "POST",
        url: `/api/rooms/${roomId}/messages`,
        headers: alice.headers,
      });
      expect(noBody.json().code).toBe("content_required");
      const badRoom = await t.app.inject({
        method: "POST",
        url: "/api/rooms/general/messages",
        headers: alice.headers,
        payload: { content: "x" },
      });
      expect(badRoom.statusCode).toBe(400);
      expect(badRoom.json()).toMatchObject({ code: "validation_failed", field: "params.roomId" });
    });

    it("answers 403 not_a_member, 404 for an unknown room and 401 without a token, before looking at the content", async () => {
      const notMember = await post(t, stranger, roomId, VISA_TEST_CARD);
      expect(notMember.statusCode).toBe(403);
      expect(notMember.json().code).toBe("not_a_member");
      const admin = await post(t, t.admin, roomId, "admins post only where they are members");
      expect(admin.statusCode).toBe(403);
      const unknown = await post(t, alice, 999999, "x");
      expect(unknown.statusCode).toBe(404);
      const anonymous = await t.app.inject({
        method: "POST",
        url: `/api/rooms/${roomId}/messages`,
        payload: { content: "x" },
      });
      expect(anonymous.statusCode).toBe(401);
    });

    it("blocks DLP matches with 422 dlp_blocked naming the rule, storing and firing nothing", async () => {
      const before = await countRows(t, "messages");
      const seen = recordEvents(t);
      const res = await post(t, alice, roomId, `my card is ${VISA_TEST_CARD}, exp 12/30`);
      seen.stop();
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: "dlp_blocked", ruleId: "payment_card" });
      expect(res.json().detail).not.toContain(VISA_TEST_CARD);
      expect(await countRows(t, "messages")).toBe(before);
      expect(seen.events).toEqual([]);
    });

    it("commits the message and its deliveries together or not at all", async () => {
      await insertEndpoint(t, { events: EVENT_NAMES });
      const messages = await countRows(t, "messages");
      const deliveries = await countRows(t, "webhook_deliveries");
      const restore = failFanOutAfterWriting(t);
      const seen = recordEvents(t);
      const failed = await post(t, alice, roomId, "this one must vanish");
      seen.stop();
      restore();
      expect(failed.statusCode).toBe(500);
      expect(await countRows(t, "messages")).toBe(messages);
      expect(await countRows(t, "webhook_deliveries")).toBe(deliveries);
      expect(seen.events).toEqual([]);
      const ok = await post(t, alice, roomId, "this one stays");
      expect(ok.statusCode).toBe(201);
      expect(await countRows(t, "messages")).toBe(messages + 1);
      const rows = await t.ctx.db
        .selectFrom("webhook_deliveries")
        .select(["event", "body"])
        .where("id", ">", 0)
        .execute();
      const queued = rows.filter((row) => JSON.parse(row.body).data.messageId === ok.json().id);
      expect(queued.map((row) => row.event)).toEqual(["MESSAGE_CREATED"]);
      expect(queued[0]!.body).not.toContain("this one stays");
    });
  });

  describe("GET /api/rooms/{roomId}/messages", () => {
    it("lists newest first in pages, for members and admins only", async () => {
      const room = await createRoom(t, bob, "paged");
      const ids: number[] = [];
      for (let i = 0; i < 5; i++) ids.push((await post(t, bob, room.id, `message ${i}`)).json().id);
      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const res = await t.app.inject({
          method: "GET",
          url: `/api/rooms/${room.id}/messages?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
          headers: bob.headers,
        });
        expect(res.statusCode).toBe(200);
        const page = res.json() as {
          items: Array<{ id: number; content: string }>;
          nextCursor: string | null;
        };
        expect(page.items.length).toBeLessThanOrEqual(2);
        seen.push(...page.items.map((m) => m.id));
        cursor = page.nextCursor;
      } while (cursor);
      expect(seen).toEqual([...ids].reverse());
      const admin = await t.app.inject({
        method: "GET",
        url: `/api/rooms/${room.id}/messages`,
        headers: t.admin.headers,
      });
      expect(admin.statusCode).toBe(200);
      expect(admin.json().items).toHaveLength(5);
      const outsider = await t.app.inject({
        method: "GET",
        url: `/api/rooms/${room.id}/messages`,
        headers: stranger.headers,
      });
      expect(outsider.statusCode).toBe(403);
      expect(outsider.json().code).toBe("not_a_member");
      const unknown = await t.app.inject({
        method: "GET",
        url: "/api/rooms/999999/messages",
        headers: bob.headers,
      });
      expect(unknown.statusCode).toBe(404);
      const anonymous = await t.app.inject({
        method: "GET",
        url: `/api/rooms/${room.id}/messages`,
      });
      expect(anonymous.statusCode).toBe(401);
      const badLimit = await t.app.inject({
        method: "GET",
        url: `/api/rooms/${room.id}/messages?limit=500`,
        headers: bob.headers,
      });
      expect(badLimit.statusCode).toBe(400);
    });
  });

  describe("GET /api/rooms/{roomId}/messages/{messageId}", () => {
    let messageId: number;
    beforeAll(async () => {
      messageId = (
        await post(t, alice, roomId, "# Title\n\nSee [docs](https://example.com/docs) & *more*")
      ).json().id;
    });

    const fetch = (
      accept: string | undefined,
      who: TestUser = bot,
      path = `/api/rooms/${roomId}/messages/${messageId}`,
    ) =>
      t.app.inject({
        method: "GET",
        url: path,
        headers: accept === undefined ? who.headers : { ...who.headers, accept },
      });

    it("answers the default representation to admins and bots, 403 to users, 401 without a token", async () => {
      for (const who of [bot, t.admin]) {
        const res = await fetch(undefined, who);
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({
          id: messageId,
          roomId,
          contentFormat: "markdown",
          sender: { type: "user", username: "alice" },
        });
        expect(res.json()).not.toHaveProperty("contentHtml");
      }
      const user = await fetch(undefined, alice);
      expect(user.statusCode).toBe(403);
      expect(user.json().code).toBe("forbidden");
      const anonymous = await t.app.inject({
        method: "GET",
        url: `/api/rooms/${roomId}/messages/${messageId}`,
      });
      expect(anonymous.statusCode).toBe(401);
    });

    it("answers 404 for a message of another room, an unknown message, and 400 for a non-integer id", async () => {
      const other = await createRoom(t, alice, "elsewhere");
      const wrongRoom = await fetch(undefined, bot, `/api/rooms/${other.id}/messages/${messageId}`);
      expect(wrongRoom.statusCode).toBe(404);
      expect(wrongRoom.json().code).toBe("message_not_found");
      const unknown = await fetch(undefined, bot, `/api/rooms/${roomId}/messages/999999`);
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json().code).toBe("message_not_found");
      // An unknown room stays the room's 404, not the message's.
      const noRoom = await fetch(undefined, bot, `/api/rooms/987654/messages/${messageId}`);
      expect(noRoom.json().code).toBe("not_found");
      const bad = await fetch(undefined, bot, `/api/rooms/${roomId}/messages/1.5`);
      expect(bad.statusCode).toBe(400);
      expect(bad.json().code).toBe("validation_failed");
    });

    it("picks the representation from the Accept header and names it in X-Parley-Media-Type", async () => {
      const cases: Array<[string | undefined, string, string[]]> = [
        [undefined, "json", []],
        ["*/*", "json", []],
        ["application/json", "json", []],
        ["application/vnd.parley.v3+json", "json", []],
        ["application/vnd.parley.v3.raw+json", "raw", ["contentRaw"]],
        ["application/vnd.parley.v3.text+json", "text", ["contentText"]],
        ["application/vnd.parley.v3.html+json", "html", ["contentHtml"]],
        [
          "application/vnd.parley.v3.full+json",
          "full",
          ["contentRaw", "contentText", "contentHtml"],
        ],
        ["application/vnd.parley.full+json", "full", ["contentRaw", "contentText", "contentHtml"]],
        [
          "text/html, application/vnd.parley.v3.html+json;q=0.5, application/json;q=0.4",
          "html",
          ["contentHtml"],
        ],
        ["application/vnd.parley.v3.text+json;q=0, application/json", "json", []],
        ["image/png", "json", []],
        ["application/vnd.parley.v4.full+json", "json", []],
      ];
      for (const [accept, format, extras] of cases) {
        const res = await fetch(accept);
        expect(res.statusCode, accept).toBe(200);
        expect(res.headers["content-type"], accept).toBe("application/json; charset=utf-8");
        expect(res.headers["x-parley-media-type"], accept).toBe(`parley.v3; format=${format}`);
        expect(res.headers.vary, accept).toMatch(/Accept/);
        const body = res.json();
        const present = ["contentRaw", "contentText", "contentHtml"].filter((key) => key in body);
        expect(present, accept).toEqual(extras);
      }
      const full = (await fetch("application/vnd.parley.v3.full+json")).json();
      expect(full.contentRaw).toBe(full.content);
      expect(full.contentHtml).toContain("<h1>Title</h1>");
      expect(full.contentHtml).toContain('<a href="https://example.com/docs"');
      expect(full.contentText).toContain("Title");
      expect(full.contentText).toContain("docs (https://example.com/docs)");
      expect(full.contentText).not.toMatch(/<[a-z]/);
    });

    it("shows an integration's message with its webhook as the sender", async () => {
      const posted = await postMessage(t.ctx, {
        roomId,
        content: "build **passed**",
        sender: {
          type: "integration",
          inboundWebhookId: 77,
          displayName: "CI",
          avatarUrl: "https://ci.example/logo.png",
        },
      });
      const res = await fetch(undefined, bot, `/api/rooms/${roomId}/messages/${posted.id}`);
      expect(res.json()).toMatchObject({
        sender: {
          type: "integration",
          id: 77,
          username: null,
          displayName: "CI",
          avatarUrl: "https://ci.example/logo.png",
        },
        inboundWebhookId: 77,
      });
    });

    it("never lets script through contentHtml, whether posted as markdown or HTML or stored before sanitizing", async () => {
      const ids: number[] = [];
      for (const payload of XSS_PAYLOADS) {
        for (const format of ["markdown", "html"]) {
          const res = await post(t, alice, roomId, payload, format);
          expect(res.statusCode, payload).toBe(201);
          ids.push(res.json().id);
        }
        // A row written raw (an older sanitizer, an import) is sanitized again when rendered.
        const now = Date.now();
        const raw = await t.ctx.db
          .insertInto("messages")
          .values({
            room_id: roomId,
            sender_user_id: alice.id,
            inbound_webhook_id: null,
            sender_display_name: "alice",
            sender_avatar_url: null,
            content: payload,
            content_format: "html",
            moderation_status: "none",
            created_at: now,
          })
          .returning("id")
          .executeTakeFirstOrThrow();
        ids.push(raw.id);
      }
      for (const id of ids) {
        const res = await fetch(
          "application/vnd.parley.v3.full+json",
          bot,
          `/api/rooms/${roomId}/messages/${id}`,
        );
        // contentText is plain text (what was typed, "<script>" included): clients escape it.
        const { contentHtml } = res.json();
        expect(unsafeMarkup(contentHtml), contentHtml).toEqual([]);
      }
    });
  });
});
