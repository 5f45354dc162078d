import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { createRoom } from "../../helpers/fixtures.js";
import { joinRoom, recordEvents } from "./chat-helpers.js";

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describeEachDialect("deleting a message on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let bot: TestUser;
  let roomId: number;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    alice = await t.user("user", "alice");
    bob = await t.user("user", "bob");
    bot = await t.user("bot", "robot");
    roomId = (await createRoom(t, alice, "deletes")).id;
    await joinRoom(t, bob, roomId);
  });
  afterAll(async () => {
    await t.close();
  });

  const posted = async (user: TestUser, content: string, threadId?: number): Promise<number> => {
    const res = await t.app.inject({
      method: "POST",
      url: `/api/rooms/${roomId}/messages`,
      headers: user.headers,
      payload: threadId === undefined ? { content } : { content, threadId },
    });
    expect(res.statusCode).toBe(201);
    return res.json().id;
  };
  const remove = (user: TestUser, messageId: number) =>
    t.app.inject({
      method: "DELETE",
      url: `/api/rooms/${roomId}/messages/${messageId}`,
      headers: user.headers,
    });
  const edit = (user: TestUser, messageId: number, content: string) =>
    t.app.inject({
      method: "PATCH",
      url: `/api/rooms/${roomId}/messages/${messageId}`,
      headers: user.headers,
      payload: { content },
    });
  const list = async (query = "") =>
    (
      await t.app.inject({
        method: "GET",
        url: `/api/rooms/${roomId}/messages?limit=200${query}`,
        headers: bob.headers,
      })
    ).json().items as Array<Record<string, unknown>>;

  it("answers 204, fires MESSAGE_DELETED once and removes the content and every revision from the database", async () => {
    const id = await posted(alice, "regrettable v1");
    expect((await edit(alice, id, "regrettable v2")).statusCode).toBe(200);
    const seen = recordEvents(t);
    const res = await remove(alice, id);
    seen.stop();
    expect(res.statusCode).toBe(204);
    expect(seen.events).toEqual([
      [
        "MESSAGE_DELETED",
        {
          roomId,
          messageId: id,
          deletedBy: "alice",
          deletedAt: expect.stringMatching(ISO),
          threadId: null,
        },
      ],
    ]);
    const row = await t.ctx.db
      .selectFrom("messages")
      .select(["content", "deleted_at"])
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    expect(row.content).toBe("");
    expect(row.deleted_at).not.toBeNull();
    const revisions = await t.ctx.db
      .selectFrom("message_revisions")
      .selectAll()
      .where("message_id", "=", id)
      .execute();
    expect(revisions).toEqual([]);
  });

  it("answers 410 message_deleted on fetch, edit, revisions and a second delete; 404 stays for ids never there", async () => {
    const id = await posted(alice, "gone soon");
    expect((await remove(alice, id)).statusCode).toBe(204);
    const fetched = await t.app.inject({
      method: "GET",
      url: `/api/rooms/${roomId}/messages/${id}`,
      headers: bot.headers,
    });
    expect(fetched.statusCode).toBe(410);
    expect(fetched.json().code).toBe("message_deleted");
    const edited = await edit(alice, id, "resurrected");
    expect(edited.statusCode).toBe(410);
    expect(edited.json().code).toBe("message_deleted");
    const history = await t.app.inject({
      method: "GET",
      url: `/api/rooms/${roomId}/messages/${id}/revisions`,
      headers: t.admin.headers,
    });
    expect(history.statusCode).toBe(410);
    expect((await remove(alice, id)).statusCode).toBe(410);
    const never = await remove(alice, 987_654);
    expect(never.statusCode).toBe(404);
    expect(never.json().code).toBe("message_not_found");
    const neverRevised = await t.app.inject({
      method: "GET",
      url: `/api/rooms/${roomId}/messages/987654/revisions`,
      headers: t.admin.headers,
    });
    expect(neverRevised.json().code).toBe("message_not_found");
  });

  it("lets the author or an admin delete; another member gets 403 not_author", async () => {
    const id = await posted(alice, "keep out");
    const refused = await remove(bob, id);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe("not_author");
    expect((await remove(t.admin, id)).statusCode).toBe(204);
    const dm = await t.app.inject({
      method: "POST",
      url: "/api/dms",
      headers: alice.headers,
      payload: { userId: bob.id },
    });
    const dmId = dm.json().id;
    const inDm = await t.app.inject({
      method: "POST",
      url: `/api/rooms/${dmId}/messages`,
      headers: alice.headers,
      payload: { content: "just between us" },
    });
    // An admin who is not one of a DM's members may still delete in it.
    const adminDelete = await t.app.inject({
      method: "DELETE",
      url: `/api/rooms/${dmId}/messages/${inDm.json().id}`,
      headers: t.admin.headers,
    });
    expect(adminDelete.statusCode).toBe(204);
  });

  it("shows a deleted message in lists as a tombstone, in place, and never reuses its id", async () => {
    const before = await posted(alice, "before");
    const id = await posted(alice, "to delete");
    expect((await remove(alice, id)).statusCode).toBe(204);
    const after = await posted(alice, "after");
    expect(after).toBeGreaterThan(id);
    const items = await list();
    const ids = items.map((m) => m.id);
    expect(ids.indexOf(id)).toBe(ids.indexOf(after) + 1);
    expect(ids.indexOf(before)).toBe(ids.indexOf(id) + 1);
    expect(items.find((m) => m.id === id)).toEqual({
      id,
      roomId,
      threadId: null,
      deleted: true,
      deletedAt: expect.stringMatching(ISO),
      replyCount: 0,
      lastReplyAt: null,
    });
  });

  it("a deleted reply stays in its thread as a tombstone and names its thread in MESSAGE_DELETED", async () => {
    const top = await posted(alice, "thread start");
    const reply = await posted(bob, "a reply", top);
    const seen = recordEvents(t);
    expect((await remove(bob, reply)).statusCode).toBe(204);
    seen.stop();
    expect(seen.events[0]?.[1]).toMatchObject({ messageId: reply, threadId: top });
    const thread = await list(`&threadId=${top}`);
    expect(thread).toEqual([
      {
        id: reply,
        roomId,
        threadId: top,
        deleted: true,
        deletedAt: expect.stringMatching(ISO),
        replyCount: 0,
        lastReplyAt: null,
      },
    ]);
    // Deleting the thread's first message keeps its replies readable.
    const other = await posted(bob, "another reply", top);
    expect((await remove(alice, top)).statusCode).toBe(204);
    expect((await list(`&threadId=${top}`)).map((m) => m.id)).toEqual([reply, other]);
    // Its tombstone keeps the thread's count, so a reader still finds the way to the replies.
    expect((await list()).find((m) => m.id === top)).toMatchObject({
      deleted: true,
      replyCount: 2,
      lastReplyAt: expect.stringMatching(ISO),
    });
  });
});
