import type { InboundWebhookWithToken } from "@parley/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { createRoom } from "../../helpers/fixtures.js";
import { createWebhook, ingest } from "../webhooks/inbound/inbound-helpers.js";
import { joinRoom, recordEvents } from "./chat-helpers.js";

type Item = Record<string, unknown> & { id: number };

describeEachDialect("threads on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let roomId: number;
  let otherRoomId: number;
  let hook: InboundWebhookWithToken;
  beforeAll(async () => {
    t = await createTestApp(dialect, { rateLimitWebhookIngest: "100000/1m" });
    alice = await t.user("user", "alice");
    bob = await t.user("user", "bob");
    roomId = (await createRoom(t, alice, "threads")).id;
    otherRoomId = (await createRoom(t, alice, "elsewhere")).id;
    await joinRoom(t, bob, roomId);
    hook = await createWebhook(t, { roomId });
  });
  afterAll(async () => {
    await t.close();
  });

  const postIn = (user: TestUser, payload: object, room = roomId) =>
    t.app.inject({
      method: "POST",
      url: `/api/rooms/${room}/messages`,
      headers: user.headers,
      payload,
    });
  const posted = async (user: TestUser, content: string, threadId?: number): Promise<Item> => {
    const res = await postIn(user, threadId === undefined ? { content } : { content, threadId });
    expect(res.statusCode).toBe(201);
    return res.json();
  };
  const list = async (query = ""): Promise<Item[]> => {
    const res = await t.app.inject({
      method: "GET",
      url: `/api/rooms/${roomId}/messages?limit=200${query}`,
      headers: bob.headers,
    });
    expect(res.statusCode).toBe(200);
    return res.json().items;
  };
  const fetchAs = async (id: number): Promise<Item> =>
    (
      await t.app.inject({
        method: "GET",
        url: `/api/rooms/${roomId}/messages/${id}`,
        headers: t.admin.headers,
      })
    ).json();

  it("posts a reply with threadId, counts it on the thread and fires MESSAGE_CREATED with threadId", async () => {
    const top = await posted(alice, "shall we ship?");
    expect(top).toMatchObject({ threadId: null, replyCount: 0, lastReplyAt: null });
    const seen = recordEvents(t);
    const reply = await posted(bob, "yes", top.id);
    seen.stop();
    expect(reply).toMatchObject({ threadId: top.id, replyCount: 0 });
    expect(seen.events).toEqual([
      [
        "MESSAGE_CREATED",
        {
          roomId,
          messageId: reply.id,
          senderId: bob.id,
          timestamp: reply.createdAt,
          threadId: top.id,
          mentions: [],
        },
      ],
    ]);
    const after = await fetchAs(top.id);
    expect(after).toMatchObject({
      replyCount: 1,
      lastReplyAt: reply.createdAt,
      updatedAt: reply.createdAt,
    });
    // A top-level post says so too.
    const seenTop = recordEvents(t);
    const other = await posted(alice, "top level");
    seenTop.stop();
    expect(seenTop.events[0]?.[1]).toMatchObject({ messageId: other.id, threadId: null });
  });

  it("lists top-level messages only, and with threadId that thread's replies oldest first", async () => {
    const top = await posted(alice, "a question");
    const first = await posted(bob, "answer 1", top.id);
    const second = await posted(alice, "answer 2", top.id);
    const third = await posted(bob, "answer 3", top.id);
    const topLevel = await list();
    expect(topLevel.map((m) => m.id)).toContain(top.id);
    expect(topLevel.every((m) => m.threadId === null)).toBe(true);
    expect((await list(`&threadId=${top.id}`)).map((m) => m.id)).toEqual([
      first.id,
      second.id,
      third.id,
    ]);
    // Pages continue oldest first.
    const page = await t.app.inject({
      method: "GET",
      url: `/api/rooms/${roomId}/messages?limit=2&threadId=${top.id}`,
      headers: bob.headers,
    });
    const next = await t.app.inject({
      method: "GET",
      url: `/api/rooms/${roomId}/messages?limit=2&threadId=${top.id}&cursor=${page.json().nextCursor}`,
      headers: bob.headers,
    });
    expect(next.json().items.map((m: Item) => m.id)).toEqual([third.id]);
    expect(next.json().nextCursor).toBeNull();
  });

  describe("refuses a threadId that is not a top-level, not deleted message of the room: 400 invalid_thread", () => {
    it.each([
      ["a reply", "reply"],
      ["a message of another room", "other-room"],
      ["a deleted message", "deleted"],
      ["a message hidden pending review", "hidden"],
      ["an id that never existed", "missing"],
      ["not an id", "not-an-id"],
    ])("%s", async (_name, kind) => {
      const top = await posted(alice, `thread for ${kind}`);
      let threadId: unknown = top.id;
      if (kind === "reply") threadId = (await posted(bob, "a reply", top.id)).id;
      if (kind === "other-room") {
        const res = await postIn(alice, { content: "elsewhere" }, otherRoomId);
        threadId = res.json().id;
      }
      if (kind === "deleted") {
        await t.app.inject({
          method: "DELETE",
          url: `/api/rooms/${roomId}/messages/${top.id}`,
          headers: alice.headers,
        });
      }
      if (kind === "hidden")
        await t.ctx.db
          .updateTable("messages")
          .set({ moderation_status: "QUARANTINED" })
          .where("id", "=", top.id)
          .execute();
      if (kind === "missing") threadId = 987_654_321;
      if (kind === "not-an-id") threadId = "7";
      const seen = recordEvents(t);
      const res = await postIn(bob, { content: "into the void", threadId });
      seen.stop();
      expect(res.statusCode).toBe(400);
      if (kind !== "not-an-id") expect(res.json().code).toBe("invalid_thread");
      expect(seen.events).toEqual([]);
      // Nothing counted on the thread (the reply case has its one legitimate reply).
      if (kind !== "deleted")
        expect((await fetchAs(top.id)).replyCount).toBe(kind === "reply" ? 1 : 0);
    });
  });

  it("takes threadId in the ingest body, under the same rule", async () => {
    const top = await posted(alice, "release thread");
    const res = await ingest(t, hook.token, { content: "deployed", threadId: top.id });
    expect(res.statusCode).toBe(200);
    const replies = await list(`&threadId=${top.id}`);
    expect(replies.map((m) => m.id)).toEqual([res.json().messageId]);
    const refused = await ingest(t, hook.token, {
      content: "deployed",
      threadId: res.json().messageId,
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().code).toBe("invalid_thread");
  });
});
