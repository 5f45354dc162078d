import fs from "node:fs";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { EVENT_NAMES } from "@parley/client";
import { insertEndpoint } from "../../helpers/fixtures.js";
import { openAuthenticated, subscribe, type Frame } from "../../helpers/stream-socket.js";
import { countRows, post, recordEvents } from "../chat/chat-helpers.js";

/** The deliveries queued for one endpoint so far. */
async function deliveriesTo(t: TestApp, webhookId: number): Promise<number> {
  const row = await t.ctx.db
    .selectFrom("webhook_deliveries")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("webhook_id", "=", webhookId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

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

function upload(t: TestApp, user: TestUser, roomId: number, content: string) {
  return t.app.inject({
    method: "POST",
    url: `/api/rooms/${roomId}/files`,
    headers: { ...user.headers, "content-type": "multipart/form-data; boundary=XYZ" },
    payload:
      '--XYZ\r\nContent-Disposition: form-data; name="file"; filename="notes.txt"\r\n' +
      `Content-Type: text/plain\r\n\r\n${content}\r\n--XYZ--\r\n`,
  });
}

/** The files stored under the data directory (uploads kept, temporary ones not yet removed). */
function storedFiles(t: TestApp): string[] {
  const dir = path.join(t.dataDir, "files");
  return fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true }).map(String) : [];
}

describeEachDialect("direct-message privacy on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let bot: TestUser;
  let carol: TestUser;
  let origin: string;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
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

  it("tells a DM's messages to its members' live streams, and integrations nothing of its messages or files until it is promoted", async () => {
    const endpoint = await insertEndpoint(t, { events: EVENT_NAMES });
    const deliveredEvents = async () =>
      (
        await t.ctx.db
          .selectFrom("webhook_deliveries")
          .select("event")
          .where("webhook_id", "=", endpoint.id)
          .orderBy("id")
          .execute()
      ).map((row) => row.event);
    const dm = await openDm(t, alice, carol);
    const carolStream = await openAuthenticated(origin, carol.token);
    try {
      expect(await subscribe(carolStream, dm)).toMatchObject({ type: "subscribed" });
      const posted = await post(t, alice, dm, "before");
      expect(posted.statusCode).toBe(201);
      const frame = await carolStream.next(
        (f) => f.type === "event" && f.event === "MESSAGE_CREATED" && f.roomId === dm,
      );
      expect(frame.data.message).toMatchObject({ id: posted.json().id, content: "before" });
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
      expect(await deliveredEvents()).toEqual([]);

      const promote = await t.app.inject({
        method: "POST",
        url: `/api/dms/${dm}/promote`,
        headers: alice.headers,
        payload: { name: "now a room" },
      });
      expect(promote.statusCode).toBe(200);
      expect((await post(t, alice, dm, "after")).statusCode).toBe(201);
      expect(await deliveredEvents()).toEqual(["ROOM_CREATED", "MESSAGE_CREATED"]);
    } finally {
      await carolStream.close();
      // Other tests count events: this endpoint takes no more of them.
      await t.ctx.db.deleteFrom("webhooks").where("id", "=", endpoint.id).execute();
    }
  });

  it("queues no USER_LEFT_ROOM or ROOM_DELETED delivery for a DM that was never promoted", async () => {
    // The events commit (the DM's members' live streams hear them: EVENT_AUDIENCE), but their
    // outbound audience excludes a DM, so no endpoint gets a delivery.
    const endpoint = await insertEndpoint(t, { events: ["USER_LEFT_ROOM", "ROOM_DELETED"] });
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
      expect(seen.events.map(([event]) => event)).toEqual(["USER_LEFT_ROOM", "ROOM_DELETED"]);
      expect(await deliveriesTo(t, endpoint.id)).toBe(0);
    } finally {
      seen.stop();
      await t.ctx.db.deleteFrom("webhooks").where("id", "=", endpoint.id).execute();
    }
  });

  it("refuses a DM's call to anyone outside it (403) and shows them no call id or participant", async () => {
    const dm = await openDm(t, alice, bob);
    const joined = await t.app.inject({
      method: "POST",
      url: `/api/rooms/${dm}/call/join`,
      headers: alice.headers,
    });
    expect(joined.statusCode).toBe(200);
    const { callId } = joined.json<{ callId: string }>();
    for (const outsider of [carol, bot, t.admin]) {
      for (const [method, route] of [
        ["POST", "call/join"],
        ["GET", "call"],
        ["POST", "call/leave"],
      ] as const) {
        const res = await t.app.inject({
          method,
          url: `/api/rooms/${dm}/${route}`,
          headers: outsider.headers,
        });
        expect(res.statusCode, `${outsider.username}: ${method} ${route}`).toBe(403);
        expect(res.json()).toMatchObject({ code: "not_a_member" });
        expect(res.body).not.toContain(callId);
        expect(res.body).not.toContain(alice.username);
      }
    }
    const state = await t.app.inject({ url: `/api/rooms/${dm}/call`, headers: bob.headers });
    expect(state.json()).toMatchObject({ callId, participants: [alice.username] });
  });

  it("ends the live subscription of a member who leaves a DM: nothing of it reaches their open socket, before or after it is promoted", async () => {
    const dm = await openDm(t, carol, alice);
    const carolStream = await openAuthenticated(origin, carol.token);
    const aliceStream = await openAuthenticated(origin, alice.token);
    try {
      expect(await subscribe(carolStream, dm)).toMatchObject({ type: "subscribed" });
      expect(await subscribe(aliceStream, dm)).toMatchObject({ type: "subscribed" });
      const leave = await t.app.inject({
        method: "POST",
        url: `/api/rooms/${dm}/leave`,
        headers: carol.headers,
      });
      expect(leave.statusCode).toBe(204);
      expect(await carolStream.next((f) => f.type === "error" && f.roomId === dm)).toMatchObject({
        code: "forbidden",
      });

      const messages = ["after carol left", "after the promotion"];
      expect((await post(t, alice, dm, messages[0]!)).statusCode).toBe(201);
      const promote = await t.app.inject({
        method: "POST",
        url: `/api/dms/${dm}/promote`,
        headers: alice.headers,
        payload: { name: "promoted after a leave" },
      });
      expect(promote.statusCode).toBe(200);
      const join = await t.app.inject({
        method: "POST",
        url: `/api/rooms/${dm}/join`,
        headers: bob.headers,
      });
      expect(join.statusCode).toBe(200);
      expect((await post(t, alice, dm, messages[1]!)).statusCode).toBe(201);
      // Alice's socket has both messages: the stream sent them, and carol's socket had its chance.
      await aliceStream.until(
        (frames) =>
          frames.filter((f) => f.event === "MESSAGE_CREATED" && f.roomId === dm).length === 2,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      const leaked = carolStream.frames.filter(
        (f) => f.type === "event" && f.roomId === dm && f.event === "MESSAGE_CREATED",
      );
      expect(leaked).toEqual([]);
      expect(JSON.stringify(carolStream.frames)).not.toContain(messages[0]);
      expect(JSON.stringify(carolStream.frames)).not.toContain(messages[1]);
    } finally {
      await carolStream.close();
      await aliceStream.close();
    }
  });

  it("takes a member who leaves a DM out of its call", async () => {
    const dm = await openDm(t, carol, alice);
    for (const member of [carol, alice]) {
      const res = await t.app.inject({
        method: "POST",
        url: `/api/rooms/${dm}/call/join`,
        headers: member.headers,
      });
      expect(res.statusCode).toBe(200);
    }
    const leave = await t.app.inject({
      method: "POST",
      url: `/api/rooms/${dm}/leave`,
      headers: carol.headers,
    });
    expect(leave.statusCode).toBe(204);
    const state = await t.app.inject({ url: `/api/rooms/${dm}/call`, headers: alice.headers });
    expect(state.json()).toMatchObject({ participants: [alice.username] });
    const asFormerMember = await t.app.inject({
      url: `/api/rooms/${dm}/call`,
      headers: carol.headers,
    });
    expect(asFormerMember.statusCode).toBe(403);
  });

  it("tells a DM's presence and call to its members' live streams only, never to outbound webhooks", async () => {
    const endpoint = await insertEndpoint(t, { events: ["USER_JOINED_ROOM", "USER_LEFT_ROOM"] });
    const deliveries = () => deliveriesTo(t, endpoint.id);
    const before = await deliveries();
    const dm = await openDm(t, bob, bot);
    const botStream = await openAuthenticated(origin, bot.token);
    const bobStream = await openAuthenticated(origin, bob.token);
    try {
      expect(await subscribe(botStream, dm)).toMatchObject({ type: "subscribed" });
      expect(await subscribe(bobStream, dm)).toMatchObject({ type: "subscribed" });
      const isEvent = (event: string, via: string) => (frame: Frame) =>
        frame.type === "event" &&
        frame.event === event &&
        frame.roomId === dm &&
        frame.data.username === bob.username &&
        frame.data.via === via;
      await botStream.next(isEvent("USER_JOINED_ROOM", "presence"));
      for (const route of ["call/join", "call/leave"]) {
        const res = await t.app.inject({
          method: "POST",
          url: `/api/rooms/${dm}/${route}`,
          headers: bob.headers,
        });
        expect(res.statusCode).toBeLessThan(300);
      }
      await botStream.next(isEvent("USER_JOINED_ROOM", "call"));
      await botStream.next(isEvent("USER_LEFT_ROOM", "call"));
      // Every event above committed before its frame was sent: no delivery row was written then.
      expect(await deliveries()).toBe(before);
    } finally {
      await botStream.close();
      await bobStream.close();
    }
  });

  it("refuses an upload into a DM from anyone outside it (403) and stores nothing", async () => {
    const dm = await openDm(t, bob, carol);
    const rows = await countRows(t, "files");
    const onDisk = storedFiles(t).length;
    for (const outsider of [alice, bot, t.admin]) {
      const res = await upload(t, outsider, dm, "planted by an outsider");
      expect(res.statusCode, outsider.username).toBe(403);
      expect(res.json()).toMatchObject({ code: "not_a_member" });
    }
    expect(await countRows(t, "files")).toBe(rows);
    expect(storedFiles(t)).toHaveLength(onDisk);
    expect((await upload(t, bob, dm, "ours")).statusCode).toBe(201);
    expect(await countRows(t, "files")).toBe(rows + 1);
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
