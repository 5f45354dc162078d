import type { AddressInfo } from "node:net";
import WebSocket from "ws";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect, SQLITE } from "../../helpers/dialects.js";
import {
  openAuthenticated,
  openStream,
  subscribe,
  type Frame,
  type StreamSocket,
} from "../../helpers/stream-socket.js";

describeEachDialect("live stream on $name", (dialect) => {
  let t: TestApp;
  let origin: string;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  const sockets: StreamSocket[] = [];

  const open = async (user: TestUser) => {
    const socket = await openAuthenticated(origin, user.token);
    sockets.push(socket);
    return socket;
  };

  async function call<T = Frame>(user: TestUser, method: string, url: string, payload?: object) {
    const res = await t.app.inject({
      method: method as "GET",
      url,
      headers: user.headers,
      ...(payload ? { payload } : {}),
    });
    return { status: res.statusCode, body: (res.body ? res.json() : undefined) as T };
  }

  async function createRoom(owner: TestUser, ...members: TestUser[]): Promise<number> {
    const room = await call<{ id: number }>(owner, "POST", "/api/rooms", { name: "r" });
    for (const member of members) await call(member, "POST", `/api/rooms/${room.body.id}/join`);
    return room.body.id;
  }

  const post = async (user: TestUser, roomId: number, content: string) =>
    (await call<{ id: number }>(user, "POST", `/api/rooms/${roomId}/messages`, { content })).body
      .id;

  const messageFrame = (id: number) => (frame: Frame) =>
    frame.type === "event" && frame.event === "MESSAGE_CREATED" && frame.data.messageId === id;

  beforeAll(async () => {
    t = await createTestApp(dialect, { presenceGraceMs: 300, presenceHeartbeatMs: 200 });
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    alice = await t.user("user", `alice-${dialect.name}`);
    bob = await t.user("user", `bob-${dialect.name}`);
    carol = await t.user("user", `carol-${dialect.name}`);
  });
  afterEach(async () => {
    await Promise.all(sockets.splice(0).map((socket) => socket.close()));
  });
  afterAll(async () => {
    await t?.close();
  });

  describe("authentication", () => {
    it("answers ready with the user's id and name after a valid auth frame", async () => {
      const socket = await openStream(origin);
      sockets.push(socket);
      socket.send({ type: "auth", token: alice.token });
      expect(await socket.next()).toEqual({
        type: "ready",
        userId: alice.id,
        username: alice.username,
      });
    });

    it("closes with 4401 on a bad token", async () => {
      const socket = await openStream(origin);
      socket.send({ type: "auth", token: `${alice.token}x` });
      expect((await socket.closed).code).toBe(4401);
      expect(socket.frames).toEqual([]);
    });

    it("closes with 4401 when the first frame is not auth", async () => {
      const socket = await openStream(origin);
      socket.send({ type: "subscribe", roomId: 1 });
      expect((await socket.closed).code).toBe(4401);
    });

    it("closes with 4401 when no auth frame comes within 5 s", async () => {
      const socket = await openStream(origin);
      const started = Date.now();
      expect((await socket.closed).code).toBe(4401);
      expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
    }, 10_000);

    it("closes with 4401 the open connections of a user an admin disables, and only theirs", async () => {
      const dave = await t.user("user", `dave-${dialect.name}`);
      const davesSocket = await open(dave);
      const alicesSocket = await open(alice);
      const disabled = await t.app.inject({
        method: "POST",
        url: `/api/admin/users/${dave.id}/disable`,
        headers: t.admin.headers,
      });
      expect(disabled.statusCode).toBe(200);
      expect((await davesSocket.closed).code).toBe(4401);
      alicesSocket.send({ type: "ping" });
      expect(await alicesSocket.next()).toEqual({ type: "pong" });
    });

    it("closes a socket that did not ask for the parley.v1 subprotocol", async () => {
      const socket = await openStream(origin, { protocol: null });
      expect((await socket.closed).code).toBe(1002);
    });

    it("answers a ping frame with pong", async () => {
      const socket = await open(alice);
      socket.send({ type: "ping" });
      expect(await socket.next()).toEqual({ type: "pong" });
    });

    it("answers an unknown frame with invalid_frame and stays open", async () => {
      const socket = await open(alice);
      socket.send({ type: "shout" });
      expect(await socket.next()).toEqual({ type: "error", code: "invalid_frame" });
      socket.send({ type: "ping" });
      expect(await socket.next()).toEqual({ type: "pong" });
    });
  });

  describe("subscriptions and event frames", () => {
    it("refuses a room the user is not a member of, and one that does not exist", async () => {
      const roomId = await createRoom(alice);
      const socket = await open(carol);
      expect(await subscribe(socket, roomId)).toEqual({ type: "error", code: "forbidden", roomId });
      expect(await subscribe(socket, 999_999)).toEqual({
        type: "error",
        code: "forbidden",
        roomId: 999_999,
      });
      // Nothing of that room reaches it.
      await post(alice, roomId, "private");
      socket.send({ type: "ping" });
      await socket.next((frame) => frame.type === "pong");
      expect(socket.frames.filter((frame) => frame.type === "event")).toEqual([]);
    });

    it("sends MESSAGE_CREATED with the .full+json message, as the fetch route builds it", async () => {
      const roomId = await createRoom(alice, bob);
      const socket = await open(bob);
      expect(await subscribe(socket, roomId)).toMatchObject({ type: "subscribed", roomId });
      const id = await post(alice, roomId, "Hello **there**");
      const frame = await socket.next(messageFrame(id));
      const fetched = await t.app.inject({
        url: `/api/rooms/${roomId}/messages/${id}`,
        headers: { ...t.admin.headers, accept: "application/vnd.parley.v3.full+json" },
      });
      expect(frame).toEqual({
        type: "event",
        event: "MESSAGE_CREATED",
        roomId,
        data: {
          roomId,
          messageId: id,
          senderId: alice.id,
          timestamp: fetched.json().createdAt,
          threadId: null,
          mentions: [],
          message: fetched.json(),
        },
      });
      expect(frame.data.message.contentHtml).toContain("<strong>there</strong>");
    });

    it("sends MESSAGE_UPDATED with the edited .full+json message, then MESSAGE_DELETED, in commit order", async () => {
      const roomId = await createRoom(alice, bob);
      const socket = await open(bob);
      await subscribe(socket, roomId);
      const id = await post(alice, roomId, "first");
      await socket.next(messageFrame(id));
      const edited = await call(alice, "PATCH", `/api/rooms/${roomId}/messages/${id}`, {
        content: "second *take*",
      });
      expect(edited.status).toBe(200);
      expect((await call(alice, "DELETE", `/api/rooms/${roomId}/messages/${id}`)).status).toBe(204);
      const updated = await socket.next(
        (f) => f.type === "event" && f.event === "MESSAGE_UPDATED" && f.data.messageId === id,
      );
      expect(updated.data).toMatchObject({
        roomId,
        messageId: id,
        revision: 2,
        editedBy: alice.username,
        mentions: [],
        message: { id, content: "second *take*", revision: 2 },
      });
      expect(updated.data.message.contentHtml).toContain("<em>take</em>");
      const deleted = await socket.next(
        (f) => f.type === "event" && f.event === "MESSAGE_DELETED" && f.data.messageId === id,
      );
      expect(deleted.data).toEqual({
        roomId,
        messageId: id,
        deletedBy: alice.username,
        deletedAt: expect.any(String),
        threadId: null,
      });
      const order = socket.frames
        .filter((f) => f.type === "event" && f.data?.messageId === id)
        .map((f) => f.event);
      expect(order).toEqual(["MESSAGE_CREATED", "MESSAGE_UPDATED", "MESSAGE_DELETED"]);
    });

    it("sends membership joins and leaves, then ROOM_DELETED, and ends the subscription", async () => {
      const roomId = await createRoom(alice);
      const socket = await open(alice);
      await subscribe(socket, roomId);
      await call(carol, "POST", `/api/rooms/${roomId}/join`);
      expect(
        await socket.next(
          (f) => f.type === "event" && f.via !== "presence" && f.data.via === "membership",
        ),
      ).toEqual({
        type: "event",
        event: "USER_JOINED_ROOM",
        roomId,
        data: { roomId, username: carol.username, via: "membership" },
      });
      await call(carol, "POST", `/api/rooms/${roomId}/leave`);
      expect(await socket.next((f) => f.type === "event" && f.data.via === "membership")).toEqual({
        type: "event",
        event: "USER_LEFT_ROOM",
        roomId,
        data: { roomId, username: carol.username, via: "membership" },
      });
      expect((await call(alice, "DELETE", `/api/rooms/${roomId}`)).status).toBe(204);
      expect(await socket.next((f) => f.type === "event" && f.event === "ROOM_DELETED")).toEqual({
        type: "event",
        event: "ROOM_DELETED",
        roomId,
        data: { roomId, deletedBy: alice.username },
      });
    });

    it("ends the subscription of a member who leaves the room", async () => {
      const roomId = await createRoom(alice, bob);
      const socket = await open(bob);
      await subscribe(socket, roomId);
      await call(bob, "POST", `/api/rooms/${roomId}/leave`);
      expect(await socket.next((f) => f.type === "error")).toEqual({
        type: "error",
        code: "forbidden",
        roomId,
      });
      const after = await post(alice, roomId, "not for bob");
      // The next frame bob gets is the pong, not that message.
      socket.send({ type: "ping" });
      await socket.next((frame) => frame.type === "pong");
      expect(socket.frames.some(messageFrame(after))).toBe(false);
    });

    it("stops sending a room's frames after unsubscribe", async () => {
      const roomId = await createRoom(alice, bob);
      const socket = await open(bob);
      await subscribe(socket, roomId);
      const first = await post(alice, roomId, "one");
      await socket.next(messageFrame(first));
      socket.send({ type: "unsubscribe", roomId });
      socket.send({ type: "ping" });
      await socket.next((frame) => frame.type === "pong");
      const second = await post(alice, roomId, "two");
      // A second subscriber that gets `second` shows it went out; bob must not have it.
      const witness = await open(alice);
      await subscribe(witness, roomId, first);
      await witness.next(messageFrame(second));
      socket.send({ type: "ping" });
      await socket.next((frame) => frame.type === "pong");
      expect(socket.frames.some(messageFrame(second))).toBe(false);
    });

    it("delivers one room's messages to every subscriber exactly once, in the same order", async () => {
      const roomId = await createRoom(alice, bob);
      const a = await open(alice);
      const b = await open(bob);
      await subscribe(a, roomId);
      await subscribe(b, roomId);
      const ids = await Promise.all(
        Array.from({ length: 40 }, (_, i) => post(i % 2 ? alice : bob, roomId, `m${i}`)),
      );
      // On PostgreSQL, ids are drawn before commit, so frames (in commit order) may end with any
      // of them: wait for every one.
      const all = (frames: Frame[]) => ids.every((id) => frames.some(messageFrame(id)));
      await a.until(all);
      await b.until(all);
      const seen = (socket: StreamSocket) =>
        socket.frames
          .filter((f) => f.type === "event" && f.event === "MESSAGE_CREATED")
          .map((f) => f.data.messageId as number);
      // Commit order; on SQLite commits happen in id order.
      expect(seen(a).sort((x, y) => x - y)).toEqual([...ids].sort((x, y) => x - y));
      expect(seen(b)).toEqual(seen(a));
      if (dialect.name === "sqlite") expect(seen(a)).toEqual([...ids].sort((x, y) => x - y));
    });
  });

  describe("resume with after", () => {
    it("sends every message after `after` exactly once, then live ones, across a reconnect", async () => {
      const roomId = await createRoom(alice, bob);
      const first = await open(bob);
      await subscribe(first, roomId);
      const early = [await post(alice, roomId, "e1"), await post(alice, roomId, "e2")];
      await first.next(messageFrame(early[1]!));
      await first.close();

      const missed = [];
      for (let i = 0; i < 5; i++) missed.push(await post(alice, roomId, `missed ${i}`));
      const second = await open(bob);
      // Messages keep coming while the resume runs: each must arrive once.
      const during = Promise.all(
        Array.from({ length: 10 }, (_, i) => post(alice, roomId, `during ${i}`)),
      );
      second.send({ type: "subscribe", roomId, after: early[1] });
      const live = await during;
      const after = await post(alice, roomId, "after");
      await second.next(messageFrame(after));

      const frames = second.frames.filter((f) => f.type !== "ready");
      expect(frames[0]).toMatchObject({ type: "subscribed", roomId });
      const messages = frames
        .filter((f) => f.type === "event" && f.event === "MESSAGE_CREATED")
        .map((f) => f.data.messageId as number);
      const expected = [...missed, ...live, after].sort((x, y) => x - y);
      expect([...messages].sort((x, y) => x - y)).toEqual(expected);
      expect(new Set(messages).size).toBe(messages.length);
      // The resumed (missed) messages come first, in id order.
      expect(messages.slice(0, missed.length)).toEqual(missed);
      // Resumed frames are the same frames live ones are.
      const resumed = frames.find(messageFrame(missed[0]!))!;
      expect(resumed.data.message).toMatchObject({ id: missed[0], content: "missed 0" });
      expect(Object.keys(resumed.data)).toEqual([
        "roomId",
        "messageId",
        "senderId",
        "timestamp",
        "threadId",
        "mentions",
        "message",
      ]);
    });
  });

  describe("presence", () => {
    it("lists who is present and updates the list as users come and go", async () => {
      const roomId = await createRoom(alice, bob);
      const a = await open(alice);
      expect(await subscribe(a, roomId)).toEqual({
        type: "subscribed",
        roomId,
        present: [alice.username],
      });
      const b = await open(bob);
      expect(await subscribe(b, roomId)).toEqual({
        type: "subscribed",
        roomId,
        present: [alice.username, bob.username].sort(),
      });
      // bob's membership join (createRoom) may reach the stream after alice subscribed, on PostgreSQL.
      const bobsPresence = (f: Frame) =>
        f.type === "event" && f.data.username === bob.username && f.data.via === "presence";
      expect(await a.next(bobsPresence)).toEqual({
        type: "event",
        event: "USER_JOINED_ROOM",
        roomId,
        data: { roomId, username: bob.username, via: "presence" },
      });
      expect(await a.next((f) => f.type === "presence")).toEqual({
        type: "presence",
        roomId,
        present: [alice.username, bob.username].sort(),
      });
      await b.close();
      // After the grace (300 ms here): left, and the list shrinks.
      expect(
        await a.next((f) => f.type === "event" && f.event === "USER_LEFT_ROOM", 5_000),
      ).toEqual({
        type: "event",
        event: "USER_LEFT_ROOM",
        roomId,
        data: { roomId, username: bob.username, via: "presence" },
      });
      expect(await a.next((f) => f.type === "presence")).toEqual({
        type: "presence",
        roomId,
        present: [alice.username],
      });
    });

    it("keeps a user present across a reconnect within the grace period", async () => {
      const roomId = await createRoom(alice, bob);
      const a = await open(alice);
      await subscribe(a, roomId);
      const b1 = await open(bob);
      await subscribe(b1, roomId);
      // Presence events only: bob's membership join (createRoom) may reach the stream after
      // alice subscribed, on PostgreSQL.
      const bobsPresence = (f: Frame) =>
        f.type === "event" && f.data.username === bob.username && f.data.via === "presence";
      await a.next((f) => bobsPresence(f) && f.event === "USER_JOINED_ROOM");
      await b1.close();
      const b2 = await open(bob);
      await subscribe(b2, roomId);
      await b2.close();
      // The only leave is the final one; no second join happened in between.
      await a.next((f) => bobsPresence(f) && f.event === "USER_LEFT_ROOM", 5_000);
      const events = a.frames.filter(bobsPresence).map((f) => f.event);
      expect(events).toEqual(["USER_JOINED_ROOM", "USER_LEFT_ROOM"]);
    });
  });

  describe("calls and signalling", () => {
    it("joins a call, shares its id, relays signals between participants only, and leaves", async () => {
      const roomId = await createRoom(alice, bob, carol);
      const a = await open(alice);
      const b = await open(bob);
      const c = await open(carol);
      await subscribe(a, roomId);

      const noCall = await call(alice, "GET", `/api/rooms/${roomId}/call`);
      expect(noCall).toEqual({
        status: 200,
        body: { callId: null, participants: [], iceServers: [] },
      });
      const joinA = await call(alice, "POST", `/api/rooms/${roomId}/call/join`);
      expect(joinA.status).toBe(200);
      expect(joinA.body).toEqual({
        callId: expect.stringMatching(/^call_/),
        participants: [alice.username],
      });
      const joinB = await call(bob, "POST", `/api/rooms/${roomId}/call/join`);
      expect(joinB.body).toEqual({
        callId: joinA.body.callId,
        participants: [alice.username, bob.username],
      });
      // Joining twice is the same call, and fires nothing more.
      expect((await call(bob, "POST", `/api/rooms/${roomId}/call/join`)).body.callId).toBe(
        joinA.body.callId,
      );
      expect(await a.next((f) => f.type === "event" && f.data.via === "call")).toEqual({
        type: "event",
        event: "USER_JOINED_ROOM",
        roomId,
        data: { roomId, username: alice.username, via: "call" },
      });
      await a.next(
        (f) => f.type === "event" && f.data.via === "call" && f.data.username === bob.username,
      );

      a.send({ type: "signal", roomId, to: bob.username, payload: { sdp: "offer" } });
      expect(await b.next((f) => f.type === "signal")).toEqual({
        type: "signal",
        roomId,
        from: alice.username,
        payload: { sdp: "offer" },
      });
      // carol is not in the call: she may not signal, nor be signalled.
      c.send({ type: "signal", roomId, to: alice.username, payload: "x" });
      expect(await c.next()).toEqual({ type: "error", code: "not_in_call", roomId });
      a.send({ type: "signal", roomId, to: carol.username, payload: "y" });
      expect(await a.next((f) => f.type === "error")).toEqual({
        type: "error",
        code: "not_in_call",
        roomId,
      });
      b.send({ type: "ping" });
      await b.next((f) => f.type === "pong");
      expect(b.frames.filter((f) => f.type === "signal")).toHaveLength(1);

      expect((await call(bob, "POST", `/api/rooms/${roomId}/call/leave`)).status).toBe(204);
      expect(
        await a.next(
          (f) => f.type === "event" && f.event === "USER_LEFT_ROOM" && f.data.via === "call",
        ),
      ).toEqual({
        type: "event",
        event: "USER_LEFT_ROOM",
        roomId,
        data: { roomId, username: bob.username, via: "call" },
      });
      b.send({ type: "signal", roomId, to: alice.username, payload: "late" });
      expect(await b.next((f) => f.type === "error")).toMatchObject({ code: "not_in_call" });
    });

    it("answers 403 to a non-member joining a call", async () => {
      const roomId = await createRoom(alice);
      const res = await call(carol, "POST", `/api/rooms/${roomId}/call/join`);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: "not_a_member" });
      expect((await call(carol, "GET", `/api/rooms/${roomId}/call`)).status).toBe(403);
    });

    it("takes a participant out of the call when their presence in the room ends", async () => {
      const roomId = await createRoom(alice, bob);
      const a = await open(alice);
      await subscribe(a, roomId);
      const b = await open(bob);
      await subscribe(b, roomId);
      await call(bob, "POST", `/api/rooms/${roomId}/call/join`);
      await b.close();
      const left = await a.next(
        (f) => f.type === "event" && f.event === "USER_LEFT_ROOM" && f.data.via === "call",
        5_000,
      );
      expect(left.data.username).toBe(bob.username);
      const state = await call(alice, "GET", `/api/rooms/${roomId}/call`);
      expect(state.body).toMatchObject({ callId: null, participants: [] });
    });
  });

  it("reports connections and subscriptions on /metrics", async () => {
    const roomId = await createRoom(alice);
    const socket = await open(alice);
    await subscribe(socket, roomId);
    const metrics = (await t.app.inject({ url: "/metrics" })).body;
    expect(metrics).toMatch(/^parley_stream_connections 1$/m);
    expect(metrics).toMatch(/^parley_stream_subscriptions 1$/m);
    expect(metrics).toMatch(/^parley_stream_send_buffer_bytes \d+$/m);
  });
});

describe("dead sockets", () => {
  let t: TestApp;
  let origin: string;

  beforeAll(async () => {
    t = await createTestApp(SQLITE, { streamPingIntervalMs: 100 });
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t?.close();
  });

  it("drops a socket that stops answering pings, and keeps one that answers", async () => {
    const user = await t.user("user", "pinged");
    const live = await openAuthenticated(origin, user.token);
    // A client whose pongs never come (a dead peer, a half-open connection).
    const dead = new WebSocket(`${origin.replace("http", "ws")}/api/stream`, "parley.v1", {
      autoPong: false,
    });
    await new Promise((resolve) => dead.once("open", resolve));
    dead.send(JSON.stringify({ type: "auth", token: user.token }));
    const closed = new Promise<number>((resolve) => dead.once("close", resolve));
    // Terminated without a close frame: the client sees 1006.
    expect(await closed).toBe(1006);
    live.send({ type: "ping" });
    expect(await live.next((f) => f.type === "pong")).toEqual({ type: "pong" });
    expect((await t.app.inject({ url: "/metrics" })).body).toMatch(
      /^parley_stream_dead_connections_dropped_total 1$/m,
    );
    await live.close();
  });

  it("refuses a signal payload over the limit without relaying it", async () => {
    const [ann, ben] = [await t.user("user", "ann"), await t.user("user", "ben")];
    const room = await t.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: ann.headers,
      payload: { name: "big" },
    });
    const roomId = room.json().id as number;
    await t.app.inject({ method: "POST", url: `/api/rooms/${roomId}/join`, headers: ben.headers });
    for (const user of [ann, ben])
      await t.app.inject({
        method: "POST",
        url: `/api/rooms/${roomId}/call/join`,
        headers: user.headers,
      });
    const a = await openAuthenticated(origin, ann.token);
    a.send({ type: "signal", roomId, to: "ben", payload: "x".repeat(8_000) });
    expect(await a.next((f) => f.type === "error")).toEqual({
      type: "error",
      code: "signal_too_large",
      roomId,
      limit: 7_000,
    });
    await a.close();
  });
});

describeEachDialect("token revocation on the live stream on $name", (dialect) => {
  let t: TestApp;
  let origin: string;

  beforeAll(async () => {
    t = await createTestApp(dialect, { streamReauthenticateMs: 100 });
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t?.close();
  });

  async function issueToken(userId: number): Promise<{ token: string; tokenId: string }> {
    const res = await t.app.inject({
      method: "POST",
      url: `/api/admin/users/${userId}/tokens`,
      headers: t.admin.headers,
      payload: {},
    });
    expect(res.statusCode).toBe(201);
    return res.json();
  }

  it("closes with 4401 the connections of a revoked token, and only those", async () => {
    const user = await t.user("user", `revoked-${dialect.name}`);
    const [first, second] = [await issueToken(user.id), await issueToken(user.id)];
    // Opened first, so each round checks its token before the other's: the round that closes the
    // revoked connection has already checked this one and kept it.
    const keptSocket = await openAuthenticated(origin, second.token);
    const revokedSocket = await openAuthenticated(origin, first.token);
    const revoked = await t.app.inject({
      method: "DELETE",
      url: `/api/admin/tokens/${first.tokenId}`,
      headers: t.admin.headers,
    });
    expect(revoked.statusCode).toBe(204);
    const closed = await revokedSocket.closed;
    expect(closed.code).toBe(4401);
    keptSocket.send({ type: "ping" });
    expect(await keptSocket.next()).toEqual({ type: "pong" });
    await keptSocket.close();
  });

  it("closes with 4401 every connection of a user whose tokens were all revoked", async () => {
    const user = await t.user("user", `revoke-all-${dialect.name}`);
    const socket = await openAuthenticated(origin, user.token);
    const res = await t.app.inject({
      method: "POST",
      url: `/api/admin/users/${user.id}/revoke-tokens`,
      headers: t.admin.headers,
    });
    expect(res.statusCode).toBe(204);
    expect((await socket.closed).code).toBe(4401);
  });
});
