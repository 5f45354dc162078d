import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ModerationClassifier } from "../../../src/safety/moderation/moderation-classifier.js";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { createRoom } from "../../helpers/fixtures.js";
import { joinRoom, post, recordEvents } from "./chat-helpers.js";

/** Quarantines content with the marker word, lets anything else through. */
const stubClassifier: ModerationClassifier = {
  name: "stub",
  async classify(text) {
    if (text.includes("QUARANTINE")) return { category: "harassment", score: 0.95 };
    return { category: "none", score: 0 };
  },
};

describeEachDialect("reactions on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let stranger: TestUser;
  let roomId: number;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    t.ctx.safety.classifier = stubClassifier;
    alice = await t.user("user", "alice");
    bob = await t.user("user", "bob");
    stranger = await t.user("user", "stranger");
    roomId = (await createRoom(t, alice, "reactions")).id;
    await joinRoom(t, bob, roomId);
  });
  afterAll(async () => {
    await t.close();
  });

  const posted = async (user: TestUser = alice): Promise<number> => {
    const res = await post(t, user, roomId, "react to me");
    expect(res.statusCode).toBe(201);
    return res.json().id;
  };
  const react = (
    user: TestUser,
    messageId: number,
    emoji: string,
    method: "PUT" | "DELETE" = "PUT",
    room = roomId,
  ) =>
    t.app.inject({
      method,
      url: `/api/rooms/${room}/messages/${messageId}/reactions/${encodeURIComponent(emoji)}`,
      headers: user.headers,
    });
  const messageOf = async (messageId: number) => {
    const res = await t.app.inject({
      method: "GET",
      url: `/api/rooms/${roomId}/messages/${messageId}`,
      headers: t.admin.headers,
    });
    expect(res.statusCode).toBe(200);
    return res.json();
  };
  const storedRows = (messageId: number) =>
    t.ctx.db
      .selectFrom("message_reactions")
      .selectAll()
      .where("message_id", "=", messageId)
      .execute();

  describe("PUT .../reactions/{emoji}", () => {
    it("answers 204, fires REACTION_ADDED once, and a second PUT changes and fires nothing", async () => {
      const id = await posted();
      const seen = recordEvents(t);
      expect((await react(bob, id, "👍")).statusCode).toBe(204);
      expect((await react(bob, id, "👍")).statusCode).toBe(204);
      seen.stop();
      expect(seen.events).toEqual([
        ["REACTION_ADDED", { roomId, messageId: id, emoji: "👍", username: "bob" }],
      ]);
      expect(await storedRows(id)).toHaveLength(1);
    });

    it("stores a shortcode name as its emoji", async () => {
      const id = await posted();
      const seen = recordEvents(t);
      expect((await react(bob, id, "tada")).statusCode).toBe(204);
      expect((await react(alice, id, "+1")).statusCode).toBe(204);
      seen.stop();
      expect(seen.events.map(([, data]) => (data as { emoji: string }).emoji)).toEqual([
        "🎉",
        "👍",
      ]);
      expect((await storedRows(id)).map((row) => row.emoji).sort()).toEqual(["👍", "🎉"].sort());
    });

    it("accepts one emoji made of several code points (skin tone, ZWJ family, flag, keycap)", async () => {
      const id = await posted();
      for (const emoji of ["👍🏽", "👨‍👩‍👧‍👦", "🇫🇷", "#️⃣", "❤️"])
        expect((await react(bob, id, emoji)).statusCode, emoji).toBe(204);
      expect((await messageOf(id)).reactions.map((r: { emoji: string }) => r.emoji)).toEqual([
        "👍🏽",
        "👨‍👩‍👧‍👦",
        "🇫🇷",
        "#️⃣",
        "❤️",
      ]);
    });

    it("answers 400 invalid_emoji for two emoji, text, an unknown shortcode or :name: with colons", async () => {
      const id = await posted();
      for (const emoji of ["👍👍", "a1", "qqq", "not_a_shortcode", ":tada:", "1", "👍x"]) {
        const res = await react(bob, id, emoji);
        expect(res.statusCode, emoji).toBe(400);
        expect(res.json().code, emoji).toBe("invalid_emoji");
      }
      expect(await storedRows(id)).toHaveLength(0);
    });

    it("allows at most 20 different emoji on a message (400 too_many_reactions), more people on one of them", async () => {
      const id = await posted();
      const twenty = [..."😀😃😄😁😆😅😂🤣😊😇🙂🙃😉😌😍🥰😘😗😙😚"];
      expect(twenty).toHaveLength(20);
      for (const emoji of twenty) expect((await react(bob, id, emoji)).statusCode).toBe(204);
      const res = await react(bob, id, "🎉");
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe("too_many_reactions");
      expect((await react(alice, id, "😀")).statusCode).toBe(204);
      expect(await storedRows(id)).toHaveLength(21);
    });

    it("answers 403 to a stranger to the room and 404 for a message of another room", async () => {
      const id = await posted();
      expect((await react(stranger, id, "👍")).statusCode).toBe(403);
      const other = (await createRoom(t, bob, "other")).id;
      const res = await react(bob, id, "👍", "PUT", other);
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe("message_not_found");
      expect(await storedRows(id)).toHaveLength(0);
    });

    it("answers 404 for a message hidden pending review", async () => {
      const res = await post(t, alice, roomId, "QUARANTINE this");
      expect(res.statusCode).toBe(201);
      const hidden = await react(bob, res.json().id, "👍");
      expect(hidden.statusCode).toBe(404);
      expect(await storedRows(res.json().id)).toHaveLength(0);
    });

    it("answers 410 message_deleted on a deleted message, for PUT and DELETE", async () => {
      const id = await posted();
      const del = await t.app.inject({
        method: "DELETE",
        url: `/api/rooms/${roomId}/messages/${id}`,
        headers: alice.headers,
      });
      expect(del.statusCode).toBe(204);
      for (const method of ["PUT", "DELETE"] as const) {
        const res = await react(bob, id, "👍", method);
        expect(res.statusCode, method).toBe(410);
        expect(res.json().code).toBe("message_deleted");
      }
    });
  });

  describe("DELETE .../reactions/{emoji}", () => {
    it("answers 204, fires REACTION_REMOVED only when the reaction was there", async () => {
      const id = await posted();
      await react(bob, id, "👍");
      const seen = recordEvents(t);
      expect((await react(bob, id, "+1", "DELETE")).statusCode).toBe(204);
      expect((await react(bob, id, "👍", "DELETE")).statusCode).toBe(204);
      expect((await react(alice, id, "🎉", "DELETE")).statusCode).toBe(204);
      seen.stop();
      expect(seen.events).toEqual([
        ["REACTION_REMOVED", { roomId, messageId: id, emoji: "👍", username: "bob" }],
      ]);
      expect(await storedRows(id)).toHaveLength(0);
    });
  });

  describe("the message object", () => {
    it("shows reactions as {emoji, count, usernames} in the order each emoji was first used", async () => {
      const id = await posted();
      await react(bob, id, "🎉");
      await react(alice, id, "👍");
      await react(alice, id, "🎉");
      const expected = [
        { emoji: "🎉", count: 2, usernames: ["bob", "alice"] },
        { emoji: "👍", count: 1, usernames: ["alice"] },
      ];
      expect((await messageOf(id)).reactions).toEqual(expected);
      const list = await t.app.inject({
        method: "GET",
        url: `/api/rooms/${roomId}/messages?limit=5`,
        headers: bob.headers,
      });
      const item = list.json().items.find((m: { id: number }) => m.id === id);
      expect(item.reactions).toEqual(expected);
      const fresh = await posted();
      expect((await messageOf(fresh)).reactions).toEqual([]);
    });

    it("names the first 20 who reacted and counts them all", async () => {
      const id = await posted();
      const users: TestUser[] = [];
      for (let i = 0; i < 22; i++) {
        const user = await t.user("user", `fan${i}-${id}`);
        await joinRoom(t, user, roomId);
        users.push(user);
      }
      for (const user of users) expect((await react(user, id, "🎉")).statusCode).toBe(204);
      const [reaction] = (await messageOf(id)).reactions;
      expect(reaction.count).toBe(22);
      expect(reaction.usernames).toEqual(users.slice(0, 20).map((user) => user.username));
    });

    it("moves updatedAt when a reaction changes, so updatedSince lists the message", async () => {
      const id = await posted();
      const before = (await messageOf(id)).updatedAt;
      await new Promise((resolve) => setTimeout(resolve, 5));
      await react(bob, id, "🎉");
      const after = (await messageOf(id)).updatedAt;
      expect(Date.parse(after)).toBeGreaterThan(Date.parse(before));
      const changes = await t.app.inject({
        method: "GET",
        url: `/api/rooms/${roomId}/messages?updatedSince=${encodeURIComponent(before)}`,
        headers: bob.headers,
      });
      expect(changes.json().items.map((m: { id: number }) => m.id)).toContain(id);
    });

    it("loses its reactions when the message is deleted", async () => {
      const id = await posted();
      await react(bob, id, "🎉");
      await t.app.inject({
        method: "DELETE",
        url: `/api/rooms/${roomId}/messages/${id}`,
        headers: alice.headers,
      });
      expect(await storedRows(id)).toHaveLength(0);
    });
  });

  describe("concurrency", () => {
    it("50 members adding and removing at once on one message: no lost or doubled reactions", async () => {
      const id = await posted();
      const users: TestUser[] = [];
      for (let i = 0; i < 50; i++) {
        const user = await t.user("user", `crowd${i}-${id}`);
        await joinRoom(t, user, roomId);
        users.push(user);
      }
      const seen = recordEvents(t);
      // Each user adds twice at once; the even ones then remove twice at once.
      const adds = await Promise.all(
        users.flatMap((user) => [react(user, id, "🎉"), react(user, id, "tada")]),
      );
      expect(adds.every((res) => res.statusCode === 204)).toBe(true);
      const removes = await Promise.all(
        users
          .filter((_, i) => i % 2 === 0)
          .flatMap((user) => [react(user, id, "🎉", "DELETE"), react(user, id, "🎉", "DELETE")]),
      );
      expect(removes.every((res) => res.statusCode === 204)).toBe(true);
      seen.stop();
      const kept = users.filter((_, i) => i % 2 === 1).map((user) => user.username);
      const [reaction] = (await messageOf(id)).reactions;
      expect(reaction.count).toBe(25);
      expect((await storedRows(id)).length).toBe(25);
      const events = seen.events.filter(
        ([, data]) => (data as { messageId: number }).messageId === id,
      );
      expect(events.filter(([event]) => event === "REACTION_ADDED")).toHaveLength(50);
      expect(events.filter(([event]) => event === "REACTION_REMOVED")).toHaveLength(25);
      expect(reaction.usernames.every((name: string) => kept.includes(name))).toBe(true);
    });
  });
});
