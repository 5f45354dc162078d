import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { post, recordEvents } from "../chat/chat-helpers.js";

async function openDm(t: TestApp, from: TestUser, to: TestUser): Promise<number> {
  const res = await t.app.inject({
    method: "POST",
    url: "/api/dms",
    headers: from.headers,
    payload: { userId: to.id },
  });
  expect(res.statusCode).toBeLessThan(300);
  return res.json<{ id: number }>().id;
}

describeEachDialect("direct-message privacy on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let bot: TestUser;
  let carol: TestUser;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    alice = await t.user("user", "alice");
    bob = await t.user("user", "bob");
    carol = await t.user("user", "carol");
    bot = await t.user("bot", "robot");
  });
  afterAll(async () => {
    await t.close();
  });

  it("answers 403 to a bot or an admin outside the DM asking for one of its messages", async () => {
    const dm = await openDm(t, alice, bob);
    const posted = await post(t, alice, dm, "our secret");
    expect(posted.statusCode).toBe(201);
    const messageId = posted.json<{ id: number }>().id;
    for (const outsider of [bot, t.admin]) {
      const one = await t.app.inject({
        url: `/api/rooms/${dm}/messages/${messageId}`,
        headers: outsider.headers,
      });
      expect(one.statusCode, `${outsider.username} fetching one`).toBe(403);
      expect(one.body).not.toContain("our secret");
      const list = await t.app.inject({
        url: `/api/rooms/${dm}/messages`,
        headers: outsider.headers,
      });
      expect(list.statusCode, `${outsider.username} listing`).toBe(403);
      const room = await t.app.inject({ url: `/api/rooms/${dm}`, headers: outsider.headers });
      expect(room.statusCode, `${outsider.username} reading the DM`).toBe(403);
    }
  });

  it("lets a bot that is one of the two members read the DM's messages", async () => {
    const dm = await openDm(t, carol, bot);
    const posted = await post(t, carol, dm, "hi bot");
    const one = await t.app.inject({
      url: `/api/rooms/${dm}/messages/${posted.json<{ id: number }>().id}`,
      headers: bot.headers,
    });
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({ content: "hi bot" });
  });

  it("lets admins read a DM only through the admin route", async () => {
    const dm = await openDm(t, bob, carol);
    await post(t, bob, dm, "for the record");
    const res = await t.app.inject({
      url: `/api/admin/rooms/${dm}/messages`,
      headers: t.admin.headers,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json<{ items: { content: string }[] }>().items[0]!.content).toBe("for the record");
    const asUser = await t.app.inject({
      url: `/api/admin/rooms/${dm}/messages`,
      headers: bob.headers,
    });
    expect(asUser.statusCode).toBe(403);
  });

  it("fires no event for a DM's messages, files or departures until it is promoted", async () => {
    const dm = await openDm(t, alice, carol);
    const seen = recordEvents(t);
    try {
      expect((await post(t, alice, dm, "before")).statusCode).toBe(201);
      const upload = await t.app.inject({
        method: "POST",
        url: `/api/rooms/${dm}/files`,
        headers: {
          ...alice.headers,
          "content-type": "multipart/form-data; boundary=XYZ",
        },
        payload:
          '--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n' +
          "Content-Type: text/plain\r\n\r\nhello\r\n--XYZ--\r\n",
      });
      expect(upload.statusCode).toBe(201);
      expect(seen.events.map(([name]) => name)).toEqual([]);

      const promote = await t.app.inject({
        method: "POST",
        url: `/api/dms/${dm}/promote`,
        headers: alice.headers,
        payload: { name: "now a room" },
      });
      expect(promote.statusCode).toBe(200);
      expect((await post(t, alice, dm, "after")).statusCode).toBe(201);
      expect(seen.events.map(([name]) => name)).toEqual(["ROOM_CREATED", "MESSAGE_CREATED"]);
    } finally {
      seen.stop();
    }
  });

  it("fires no USER_LEFT_ROOM or ROOM_DELETED for a DM that was never promoted", async () => {
    const left = await openDm(t, bob, alice);
    const seen = recordEvents(t);
    try {
      const leave = await t.app.inject({
        method: "POST",
        url: `/api/rooms/${left}/leave`,
        headers: bob.headers,
      });
      expect(leave.statusCode).toBe(204);
      const deleted = await openDm(t, bob, alice);
      const del = await t.app.inject({
        method: "DELETE",
        url: `/api/rooms/${deleted}`,
        headers: bob.headers,
      });
      expect(del.statusCode).toBe(204);
      expect(seen.events).toEqual([]);
    } finally {
      seen.stop();
    }
  });

  it("refuses an inbound webhook into a DM", async () => {
    const dm = await openDm(t, carol, alice);
    const res = await t.app.inject({
      method: "POST",
      url: "/api/admin/inbound-webhooks",
      headers: t.admin.headers,
      payload: { roomId: dm, displayName: "sneaky" },
    });
    expect(res.statusCode).toBe(400);
  });
});
