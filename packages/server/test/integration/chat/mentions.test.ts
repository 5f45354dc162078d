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

describeEachDialect("mentions on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let roomId: number;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    t.ctx.safety.classifier = stubClassifier;
    alice = await t.user("user", "alice");
    const bob = await t.user("user", "bob");
    const carol = await t.user("user", "carol");
    await t.user("user", "outsider");
    roomId = (await createRoom(t, alice, "mentions")).id;
    await joinRoom(t, bob, roomId);
    await joinRoom(t, carol, roomId);
  });
  afterAll(async () => {
    await t.close();
  });

  const mentionsOfPost = async (content: string, contentFormat?: string) => {
    const seen = recordEvents(t);
    const res = await post(t, alice, roomId, content, contentFormat);
    seen.stop();
    expect(res.statusCode).toBe(201);
    const created = seen.events.filter(([event]) => event === "MESSAGE_CREATED");
    expect(created).toHaveLength(1);
    return {
      id: res.json().id as number,
      mentions: (created[0]![1] as { mentions: string[] }).mentions,
    };
  };

  describe("MESSAGE_CREATED", () => {
    it("lists the room's members the content mentions, in order, each once", async () => {
      expect(
        (await mentionsOfPost("@carol can you and @bob look? thanks @carol.")).mentions,
      ).toEqual(["carol", "bob"]);
    });

    it("leaves out users who are not members and names that are not users", async () => {
      expect((await mentionsOfPost("@outsider @nobody @bob")).mentions).toEqual(["bob"]);
    });

    it("leaves out mentions inside code spans and blocks", async () => {
      expect((await mentionsOfPost("`@bob`\n\n```\n@carol\n```")).mentions).toEqual([]);
    });

    it("is empty without mentions, and for HTML content", async () => {
      expect((await mentionsOfPost("hello everyone")).mentions).toEqual([]);
      expect((await mentionsOfPost("<p>@bob</p>", "html")).mentions).toEqual([]);
    });

    it("is carried by a reply as by a top-level post", async () => {
      const top = await mentionsOfPost("top");
      const seen = recordEvents(t);
      const res = await t.app.inject({
        method: "POST",
        url: `/api/rooms/${roomId}/messages`,
        headers: alice.headers,
        payload: { content: "@bob see above", threadId: top.id },
      });
      seen.stop();
      expect(res.statusCode).toBe(201);
      expect(seen.events.find(([event]) => event === "MESSAGE_CREATED")![1]).toMatchObject({
        threadId: top.id,
        mentions: ["bob"],
      });
    });

    it("is sent when a reviewer approves a quarantined message", async () => {
      const res = await post(t, alice, roomId, "QUARANTINE @bob");
      expect(res.statusCode).toBe(201);
      const flag = await t.ctx.db
        .selectFrom("moderation_flags")
        .select("id")
        .where("message_id", "=", res.json().id)
        .executeTakeFirstOrThrow();
      const seen = recordEvents(t);
      const approved = await t.app.inject({
        method: "POST",
        url: `/api/admin/moderation/flags/${flag.id}/approve`,
        headers: t.admin.headers,
      });
      seen.stop();
      expect(approved.statusCode).toBe(200);
      expect(seen.events.find(([event]) => event === "MESSAGE_CREATED")![1]).toMatchObject({
        mentions: ["bob"],
      });
    });
  });

  describe("MESSAGE_UPDATED", () => {
    it("lists the members the new content mentions", async () => {
      const { id } = await mentionsOfPost("draft");
      const seen = recordEvents(t);
      const res = await t.app.inject({
        method: "PATCH",
        url: `/api/rooms/${roomId}/messages/${id}`,
        headers: alice.headers,
        payload: { content: "draft for @carol, not `@bob`" },
      });
      seen.stop();
      expect(res.statusCode).toBe(200);
      expect(seen.events).toEqual([
        ["MESSAGE_UPDATED", expect.objectContaining({ messageId: id, mentions: ["carol"] })],
      ]);
    });
  });
});
