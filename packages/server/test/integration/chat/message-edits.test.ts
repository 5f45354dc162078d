import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ModerationClassifier } from "../../../src/safety/moderation/moderation-classifier.js";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { createRoom } from "../../helpers/fixtures.js";
import { joinRoom, post, recordEvents } from "./chat-helpers.js";

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const VISA_TEST_CARD = "4111 1111 1111 1111";

/** Scores by marker word: 0.6 flags, 0.95 quarantines, anything else passes. */
const stubClassifier: ModerationClassifier = {
  name: "stub",
  async classify(text) {
    if (text.includes("QUARANTINE")) return { category: "harassment", score: 0.95 };
    if (text.includes("FLAG")) return { category: "spam", score: 0.6 };
    return { category: "none", score: 0 };
  },
};

describeEachDialect("editing a message on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let bot: TestUser;
  let roomId: number;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    t.ctx.safety.classifier = stubClassifier;
    alice = await t.user("user", "alice");
    bob = await t.user("user", "bob");
    bot = await t.user("bot", "robot");
    roomId = (await createRoom(t, alice, "edits")).id;
    await joinRoom(t, bob, roomId);
    await joinRoom(t, t.admin, roomId);
  });
  afterAll(async () => {
    await t.close();
  });

  const posted = async (user: TestUser, content: string): Promise<number> => {
    const res = await post(t, user, roomId, content);
    expect(res.statusCode).toBe(201);
    return res.json().id;
  };
  const edit = (user: TestUser, messageId: number, payload: object, room = roomId) =>
    t.app.inject({
      method: "PATCH",
      url: `/api/rooms/${room}/messages/${messageId}`,
      headers: user.headers,
      payload,
    });
  const revisions = (user: TestUser, messageId: number) =>
    t.app.inject({
      method: "GET",
      url: `/api/rooms/${roomId}/messages/${messageId}/revisions`,
      headers: user.headers,
    });
  const fetchAs = (user: TestUser, messageId: number) =>
    t.app.inject({
      method: "GET",
      url: `/api/rooms/${roomId}/messages/${messageId}`,
      headers: user.headers,
    });

  describe("PATCH /api/rooms/{roomId}/messages/{messageId}", () => {
    it("replaces the content, adds a revision and fires MESSAGE_UPDATED once, without content", async () => {
      const id = await posted(alice, "first draft");
      const seen = recordEvents(t);
      const res = await edit(alice, id, { content: "second **draft**" });
      seen.stop();
      expect(res.statusCode).toBe(200);
      const message = res.json();
      expect(message).toMatchObject({
        id,
        content: "second **draft**",
        contentFormat: "markdown",
        revision: 2,
        editedAt: expect.stringMatching(ISO),
      });
      expect(message.updatedAt).toBe(message.editedAt);
      expect(seen.events).toEqual([
        [
          "MESSAGE_UPDATED",
          {
            roomId,
            messageId: id,
            revision: 2,
            editedBy: "alice",
            editedAt: message.editedAt,
            mentions: [],
          },
        ],
      ]);
      expect(JSON.stringify(seen.events)).not.toContain("draft");
      expect((await fetchAs(bot, id)).json()).toMatchObject({ content: "second **draft**" });
    });

    it("answers 200 and fires nothing when the content and format are unchanged", async () => {
      const id = await posted(alice, "steady");
      const seen = recordEvents(t);
      const res = await edit(alice, id, { content: "steady", contentFormat: "markdown" });
      seen.stop();
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ revision: 1, editedAt: null });
      expect(seen.events).toEqual([]);
      // The same text in another format is a change.
      expect(
        (await edit(alice, id, { content: "steady", contentFormat: "html" })).json(),
      ).toMatchObject({ revision: 2, contentFormat: "html" });
    });

    it("lets only the author edit: another member and an admin get 403 not_author", async () => {
      const id = await posted(alice, "mine");
      const seen = recordEvents(t);
      for (const user of [bob, t.admin]) {
        const res = await edit(user, id, { content: "theirs" });
        expect(res.statusCode).toBe(403);
        expect(res.json().code).toBe("not_author");
      }
      seen.stop();
      expect(seen.events).toEqual([]);
      expect((await fetchAs(bot, id)).json()).toMatchObject({ content: "mine", revision: 1 });
      // An admin edits their own.
      const own = await posted(t.admin, "admin's note");
      expect((await edit(t.admin, own, { content: "admin's note, fixed" })).statusCode).toBe(200);
    });

    it("answers not_author before looking at the content, and 404 for a message of another room", async () => {
      const id = await posted(alice, "mine again");
      const res = await edit(bob, id, { content: "" });
      expect(res.json().code).toBe("not_author");
      const other = (await createRoom(t, alice, "elsewhere")).id;
      const moved = await edit(alice, id, { content: "moved?" }, other);
      expect(moved.statusCode).toBe(404);
      expect(moved.json().code).toBe("message_not_found");
    });

    it("applies the content rules and DLP as a post does: an edit stores and fires nothing it refuses", async () => {
      const id = await posted(alice, "harmless");
      const seen = recordEvents(t);
      const blocked = await edit(alice, id, { content: `my card is ${VISA_TEST_CARD}` });
      expect(blocked.statusCode).toBe(422);
      expect(blocked.json()).toMatchObject({ code: "dlp_blocked", ruleId: "payment_card" });
      // DLP reads the rendered text too, as on a post.
      const hidden = await edit(alice, id, {
        content: "&#52;111 1111 1111 1111",
        contentFormat: "html",
      });
      expect(hidden.json().code).toBe("dlp_blocked");
      expect((await edit(alice, id, { content: "" })).json().code).toBe("content_required");
      expect((await edit(alice, id, { content: "x".repeat(16_385) })).json().code).toBe(
        "content_too_large",
      );
      expect((await edit(alice, id, { content: "x", contentFormat: "rtf" })).json().code).toBe(
        "invalid_content_format",
      );
      expect((await edit(alice, id, { content: "x", threadId: 1 })).statusCode).toBe(400);
      seen.stop();
      expect(seen.events).toEqual([]);
      expect((await revisions(alice, id)).json().items).toHaveLength(1);
    });

    it("sanitizes edited HTML as a post does", async () => {
      const id = await posted(alice, "plain");
      const res = await edit(alice, id, {
        content: '<p>hi<script>alert(1)</script><img src=x onerror="alert(1)"></p>',
        contentFormat: "html",
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().content).not.toMatch(/script|onerror/);
    });

    it("a flagging edit queues the message for review and fires MESSAGE_UPDATED and the FLAGGED event", async () => {
      const id = await posted(alice, "fine");
      const seen = recordEvents(t);
      const res = await edit(alice, id, { content: "now FLAG me" });
      seen.stop();
      expect(res.json().moderationStatus).toBe("FLAGGED");
      expect(seen.events.map(([event]) => event)).toEqual([
        "MESSAGE_UPDATED",
        "MESSAGE_AUTO_MODERATION_FLAGGED",
      ]);
    });

    it("a quarantining edit hides the message pending review and fires only its moderation event", async () => {
      const id = await posted(alice, "innocent");
      const seen = recordEvents(t);
      const res = await edit(alice, id, { content: "QUARANTINE this" });
      seen.stop();
      expect(res.statusCode).toBe(200);
      expect(res.json().moderationStatus).toBe("QUARANTINED");
      expect(seen.events.map(([event]) => event)).toEqual(["MESSAGE_AUTO_MODERATION_QUARANTINED"]);
      expect((await fetchAs(bot, id)).statusCode).toBe(404);
      const list = await t.app.inject({
        method: "GET",
        url: `/api/rooms/${roomId}/messages?limit=200`,
        headers: bob.headers,
      });
      expect(list.json().items.map((m: { id: number }) => m.id)).not.toContain(id);
      // A clean edit does not bring it back: it stays hidden until an admin reviews it.
      const again = await edit(alice, id, { content: "innocent again" });
      expect(again.json().moderationStatus).toBe("QUARANTINED");
      expect((await fetchAs(bot, id)).statusCode).toBe(404);
    });
  });

  describe("review of an edit moderation held", () => {
    const flagOf = async (messageId: number) => {
      const res = await t.app.inject({
        method: "GET",
        url: "/api/admin/moderation/flags?limit=200",
        headers: t.admin.headers,
      });
      return (res.json().items as Array<{ id: number; messageId: number; messageText: unknown }>)
        .filter((flag) => flag.messageId === messageId)
        .at(-1)!;
    };

    it("approving a quarantined edit announces MESSAGE_UPDATED (the message was announced when posted)", async () => {
      const id = await posted(alice, "visible at first");
      const held = (await edit(alice, id, { content: "QUARANTINE me" })).json();
      const seen = recordEvents(t);
      const approved = await t.app.inject({
        method: "POST",
        url: `/api/admin/moderation/flags/${(await flagOf(id)).id}/approve`,
        headers: t.admin.headers,
      });
      seen.stop();
      expect(approved.statusCode).toBe(200);
      expect(seen.events).toEqual([
        [
          "MESSAGE_UPDATED",
          {
            roomId,
            messageId: id,
            revision: 2,
            editedBy: "alice",
            editedAt: held.editedAt,
            mentions: [],
          },
        ],
      ]);
      expect((await fetchAs(bot, id)).json()).toMatchObject({ content: "QUARANTINE me" });
    });

    it("a message quarantined when posted, then edited, is still announced as created when approved", async () => {
      const id = await posted(alice, "QUARANTINE from the start");
      await edit(alice, id, { content: "calmer now" });
      const seen = recordEvents(t);
      await t.app.inject({
        method: "POST",
        url: `/api/admin/moderation/flags/${(await flagOf(id)).id}/approve`,
        headers: t.admin.headers,
      });
      seen.stop();
      expect(seen.events.map(([event]) => event)).toEqual(["MESSAGE_CREATED"]);
    });

    it("a deleted message's flag shows no text, and approving it announces nothing", async () => {
      const id = await posted(alice, "QUARANTINE and then delete");
      const flag = await flagOf(id);
      await t.app.inject({
        method: "DELETE",
        url: `/api/rooms/${roomId}/messages/${id}`,
        headers: alice.headers,
      });
      expect((await flagOf(id)).messageText).toBeNull();
      const seen = recordEvents(t);
      await t.app.inject({
        method: "POST",
        url: `/api/admin/moderation/flags/${flag.id}/approve`,
        headers: t.admin.headers,
      });
      seen.stop();
      expect(seen.events).toEqual([]);
    });
  });

  describe("GET /api/rooms/{roomId}/messages/{messageId}/revisions", () => {
    it("lists every version oldest first, the current one included, to the author, admins and bots", async () => {
      const id = await posted(alice, "v1");
      await edit(alice, id, { content: "<b>v2</b>", contentFormat: "html" });
      const third = (await edit(alice, id, { content: "v3" })).json();
      for (const user of [alice, t.admin, bot]) {
        const res = await revisions(user, id);
        expect(res.statusCode).toBe(200);
        const items = res.json().items;
        expect(items.map((r: { revision: number }) => r.revision)).toEqual([1, 2, 3]);
        expect(items.map((r: { content: string }) => r.content)).toEqual(["v1", "<b>v2</b>", "v3"]);
        expect(items.map((r: { contentFormat: string }) => r.contentFormat)).toEqual([
          "markdown",
          "html",
          "markdown",
        ]);
        expect(items[2].editedAt).toBe(third.editedAt);
        expect(items[0].editedAt).toBe(third.createdAt);
      }
    });

    it("refuses another member: 403 not_author", async () => {
      const id = await posted(alice, "private history");
      const res = await revisions(bob, id);
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe("not_author");
    });
  });
});
