import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { UNREAD_COUNT_CAP } from "../../../src/chat/rooms-repository.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

describeEachDialect("read markers, unread and mention counts on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;

  async function call(user: TestUser, method: string, url: string, payload?: object) {
    const res = await t.app.inject({
      method: method as "GET",
      url,
      headers: user.headers,
      ...(payload ? { payload } : {}),
    });
    return { status: res.statusCode, body: (res.body ? res.json() : undefined) as Json };
  }

  async function room(owner: TestUser, ...members: TestUser[]): Promise<number> {
    const created = await call(owner, "POST", "/api/rooms", { name: "r" });
    for (const member of members) await call(member, "POST", `/api/rooms/${created.body.id}/join`);
    return created.body.id;
  }

  async function post(user: TestUser, roomId: number, content: string, extra: object = {}) {
    const res = await call(user, "POST", `/api/rooms/${roomId}/messages`, { content, ...extra });
    if (res.status !== 201)
      throw new Error(`post answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.id as number;
  }

  /** The caller's view of one room in their joined list. */
  async function listed(user: TestUser, roomId: number): Promise<Json> {
    const res = await call(user, "GET", "/api/rooms?limit=200");
    return res.body.items.find((r: Json) => r.id === roomId);
  }

  const read = (user: TestUser, roomId: number, messageId: number) =>
    call(user, "PUT", `/api/rooms/${roomId}/read`, { messageId });

  beforeAll(async () => {
    t = await createTestApp(dialect);
    alice = await t.user("user", "alice");
    bob = await t.user("user", "bob");
    carol = await t.user("user", "carol");
  });
  afterAll(async () => {
    await t.close();
  });

  it("counts the others' messages after the marker, not one's own", async () => {
    const roomId = await room(alice, bob);
    await post(alice, roomId, "one");
    await post(alice, roomId, "two");
    await post(bob, roomId, "mine");
    expect(await listed(bob, roomId)).toMatchObject({ unreadCount: 2, mentionCount: 0 });
    expect(await listed(alice, roomId)).toMatchObject({ unreadCount: 1 });
  });

  it("moves the marker forward with PUT .../read, answering the counts after it, never backwards", async () => {
    const roomId = await room(alice, bob);
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await post(alice, roomId, `m${i}`));
    const first = await read(bob, roomId, ids[1]!);
    expect(first).toEqual({
      status: 200,
      body: { roomId, lastReadMessageId: ids[1], unreadCount: 2, mentionCount: 0 },
    });
    const back = await read(bob, roomId, ids[0]!);
    expect(back.body).toMatchObject({ lastReadMessageId: ids[1], unreadCount: 2 });
    expect(await listed(bob, roomId)).toMatchObject({
      lastReadMessageId: ids[1],
      unreadCount: 2,
    });
    await read(bob, roomId, ids[3]!);
    expect(await listed(bob, roomId)).toMatchObject({ unreadCount: 0 });
    // GET one room shows the member's marker and counts too.
    expect((await call(bob, "GET", `/api/rooms/${roomId}`)).body).toMatchObject({
      lastReadMessageId: ids[3],
      unreadCount: 0,
    });
  });

  it("refuses a message of another room or no message (404), and a non-member (403)", async () => {
    const roomId = await room(alice, bob);
    const other = await room(alice);
    const elsewhere = await post(alice, other, "elsewhere");
    const res = await read(bob, roomId, elsewhere);
    expect([res.status, res.body.code]).toEqual([404, "message_not_found"]);
    expect((await read(bob, roomId, 99_999_999)).status).toBe(404);
    const own = await post(alice, roomId, "hi");
    const outsider = await read(carol, roomId, own);
    expect([outsider.status, outsider.body.code]).toEqual([403, "not_a_member"]);
    expect((await call(bob, "PUT", `/api/rooms/${roomId}/read`, {})).status).toBe(400);
  });

  it("counts mentions after the marker, replies included, and not a mention of oneself", async () => {
    const roomId = await room(alice, bob, carol);
    const top = await post(alice, roomId, "hey @bob and @carol");
    await post(alice, roomId, "in a thread, @bob", { threadId: top });
    await post(bob, roomId, "talking to myself, @bob");
    await post(alice, roomId, "`@bob` in code is no mention");
    expect(await listed(bob, roomId)).toMatchObject({ unreadCount: 2, mentionCount: 2 });
    expect(await listed(carol, roomId)).toMatchObject({ mentionCount: 1 });
    await read(bob, roomId, top);
    expect(await listed(bob, roomId)).toMatchObject({ mentionCount: 1 });
  });

  it("counts top-level messages only as unread: replies show in their thread", async () => {
    const roomId = await room(alice, bob);
    const top = await post(alice, roomId, "top");
    await post(alice, roomId, "reply", { threadId: top });
    await post(alice, roomId, "reply 2", { threadId: top });
    expect(await listed(bob, roomId)).toMatchObject({ unreadCount: 1 });
  });

  it("follows edits and deletes: a deleted message or a removed mention no longer counts", async () => {
    const roomId = await room(alice, bob);
    const a = await post(alice, roomId, "plain");
    const b = await post(alice, roomId, "to be deleted, @bob");
    expect(await listed(bob, roomId)).toMatchObject({ unreadCount: 2, mentionCount: 1 });
    await call(alice, "PATCH", `/api/rooms/${roomId}/messages/${a}`, { content: "now @bob" });
    expect(await listed(bob, roomId)).toMatchObject({ mentionCount: 2 });
    await call(alice, "DELETE", `/api/rooms/${roomId}/messages/${b}`);
    expect(await listed(bob, roomId)).toMatchObject({ unreadCount: 1, mentionCount: 1 });
    await call(alice, "PATCH", `/api/rooms/${roomId}/messages/${a}`, { content: "no one" });
    expect(await listed(bob, roomId)).toMatchObject({ mentionCount: 0 });
  });

  it("starts a new member with what was said before they joined already read", async () => {
    const roomId = await room(alice);
    await post(alice, roomId, "before carol @carol");
    await call(carol, "POST", `/api/rooms/${roomId}/join`);
    expect(await listed(carol, roomId)).toMatchObject({ unreadCount: 0, mentionCount: 0 });
    await post(alice, roomId, "after carol @carol");
    expect(await listed(carol, roomId)).toMatchObject({ unreadCount: 1, mentionCount: 1 });
  });

  it("counts in a DM too", async () => {
    const dm = await call(alice, "POST", "/api/dms", { userId: carol.id });
    await post(alice, dm.body.id, "psst");
    expect(await listed(carol, dm.body.id)).toMatchObject({ unreadCount: 1 });
  });

  it("stops counting unread messages at the cap", async () => {
    const roomId = await room(alice, bob);
    const now = Date.now();
    const rows = Array.from({ length: UNREAD_COUNT_CAP + 5 }, (_, i) => ({
      room_id: roomId,
      sender_user_id: alice.id,
      inbound_webhook_id: null,
      sender_display_name: "alice",
      sender_avatar_url: null,
      content: `bulk ${i}`,
      content_format: "markdown" as const,
      moderation_status: "none" as const,
      created_at: now,
      updated_at: now,
    }));
    for (let i = 0; i < rows.length; i += 200)
      await t.ctx.db
        .insertInto("messages")
        .values(rows.slice(i, i + 200))
        .execute();
    expect(await listed(bob, roomId)).toMatchObject({ unreadCount: UNREAD_COUNT_CAP });
  });

  describe("hidden messages", () => {
    it("does not count a quarantined message as unread", async () => {
      const roomId = await room(alice, bob);
      const id = await post(alice, roomId, "visible");
      await t.ctx.db
        .updateTable("messages")
        .set({ moderation_status: "QUARANTINED" })
        .where("id", "=", id)
        .execute();
      expect(await listed(bob, roomId)).toMatchObject({ unreadCount: 0 });
    });
  });
});
