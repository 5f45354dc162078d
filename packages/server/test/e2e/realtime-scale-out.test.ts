/**
 * The live stream across two `parley serve` processes on one PostgreSQL database: events from
 * either process reach subscribers on both, in one order; presence, signals, typing, read markers
 * and resume work across them; a SIGKILLed process's presence ends once its heartbeat expires.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { POSTGRES, type TestDatabase } from "../helpers/dialects.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";
import { killAllServers, spawnServer, type SpawnedServer } from "../helpers/spawn-server.js";
import {
  openAuthenticated,
  subscribe,
  type Frame,
  type StreamSocket,
} from "../helpers/stream-socket.js";
import { FAST_ENV } from "../helpers/knobs.js";

interface User {
  id: number;
  username: string;
  token: string;
}

describe("live stream across two processes on PostgreSQL", { tags: ["postgres"] }, () => {
  let database: TestDatabase;
  let receiver: Receiver;
  let a: SpawnedServer;
  let b: SpawnedServer;
  let adminToken: string;
  let alice: User;
  let bob: User;
  let roomId: number;
  const dirs: string[] = [];
  const sockets: StreamSocket[] = [];
  let carol: User;

  async function api<T = Frame>(
    server: SpawnedServer,
    token: string,
    method: string,
    url: string,
    body?: unknown,
  ): Promise<T> {
    const res = await fetch(`${server.url}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  async function createUser(username: string): Promise<User> {
    const user = await api<{ id: number }>(a, adminToken, "POST", "/api/admin/users", {
      username,
      role: "user",
    });
    const { token } = await api<{ token: string }>(
      a,
      adminToken,
      "POST",
      `/api/admin/users/${user.id}/tokens`,
    );
    return { id: user.id, username, token };
  }

  const open = async (server: SpawnedServer, user: User) => {
    const socket = await openAuthenticated(server.url, user.token);
    sockets.push(socket);
    return socket;
  };
  const post = async (server: SpawnedServer, user: User, content: string) =>
    (
      await api<{ id: number }>(server, user.token, "POST", `/api/rooms/${roomId}/messages`, {
        content,
      })
    ).id;
  const messageIds = (socket: StreamSocket) =>
    socket.frames
      .filter((f) => f.type === "event" && f.event === "MESSAGE_CREATED")
      .map((f) => f.data.messageId as number);
  const messageFrame = (id: number) => (f: Frame) =>
    f.type === "event" && f.event === "MESSAGE_CREATED" && f.data.messageId === id;

  beforeAll(async () => {
    database = await POSTGRES.open();
    await database.database.close();
    receiver = await startReceiver();
    const env = (name: string) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `parley-rt-${name}-`));
      dirs.push(dir);
      return {
        ...FAST_ENV,
        PARLEY_DATA_DIR: dir,
        PARLEY_PRESENCE_GRACE_MS: "300",
        PARLEY_PRESENCE_HEARTBEAT_MS: "200",
        ...database.env,
      };
    };
    a = await spawnServer({ env: env("a") });
    b = await spawnServer({ env: env("b") });
    adminToken = a.adminToken!;
    alice = await createUser("alice");
    bob = await createUser("bob");
    carol = await createUser("carol");
    roomId = (await api<{ id: number }>(a, alice.token, "POST", "/api/rooms", { name: "both" })).id;
    await api(b, bob.token, "POST", `/api/rooms/${roomId}/join`);
    await api(b, carol.token, "POST", `/api/rooms/${roomId}/join`);
    await api(a, adminToken, "POST", "/api/admin/webhooks", {
      name: "presence",
      url: receiver.url,
      secret: "e2e-presence-secret-0123456789",
      events: ["USER_JOINED_ROOM", "USER_LEFT_ROOM"],
    });
  }, 60_000);
  afterEach(async () => {
    await Promise.all(sockets.splice(0).map((socket) => socket.close()));
  });
  afterAll(async () => {
    await Promise.all(sockets.map((socket) => socket.close()));
    await killAllServers();
    await receiver?.close();
    await database?.cleanup();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("delivers messages posted on either process to subscribers on both, each once, in one order", async () => {
    const onA = await open(a, alice);
    const onB = await open(b, bob);
    await subscribe(onA, roomId);
    await subscribe(onB, roomId);
    const ids = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        i % 2 ? post(a, alice, `a${i}`) : post(b, bob, `b${i}`),
      ),
    );
    const all = (socket: StreamSocket) =>
      socket.until(() => ids.every((id) => socket.frames.some(messageFrame(id))), 15_000);
    await Promise.all([all(onA), all(onB)]);
    expect([...messageIds(onA)].sort((x, y) => x - y)).toEqual([...ids].sort((x, y) => x - y));
    expect(messageIds(onB)).toEqual(messageIds(onA));
  });

  it("ends a DM's subscription on the other process when its member leaves it there", async () => {
    const dm = (
      await api<{ id: number }>(a, alice.token, "POST", "/api/dms", {
        userId: carol.id,
      })
    ).id;
    const carolOnB = await open(b, carol);
    const aliceOnB = await open(b, alice);
    expect(await subscribe(carolOnB, dm)).toMatchObject({ type: "subscribed" });
    expect(await subscribe(aliceOnB, dm)).toMatchObject({ type: "subscribed" });
    await api(a, carol.token, "POST", `/api/rooms/${dm}/leave`);
    await carolOnB.next((f) => f.type === "error" && f.roomId === dm, 10_000);
    const after = (
      await api<{ id: number }>(a, alice.token, "POST", `/api/rooms/${dm}/messages`, {
        content: "after carol left",
      })
    ).id;
    await aliceOnB.next(messageFrame(after), 10_000);
    expect(carolOnB.frames.some(messageFrame(after))).toBe(false);
  });

  it("resumes on the other process with after, exactly once", async () => {
    const first = await open(a, bob);
    await subscribe(first, roomId);
    const seen = await post(a, alice, "seen");
    await first.next(messageFrame(seen));
    await first.close();
    const missed = [];
    for (let i = 0; i < 5; i++) missed.push(await post(a, alice, `missed ${i}`));
    const second = await open(b, bob);
    const during = Promise.all(Array.from({ length: 5 }, (_, i) => post(a, alice, `during ${i}`)));
    second.send({ type: "subscribe", roomId, after: seen });
    const live = await during;
    const last = await post(b, alice, "last");
    await second.next(messageFrame(last), 10_000);
    const got = messageIds(second);
    expect(got.slice(0, missed.length)).toEqual(missed);
    expect([...got].sort((x, y) => x - y)).toEqual(
      [...missed, ...live, last].sort((x, y) => x - y),
    );
  });

  it("shares presence and relays signals between processes", async () => {
    const onA = await open(a, alice);
    expect((await subscribe(onA, roomId)).present).toContain("alice");
    const onB = await open(b, bob);
    const subscribed = await subscribe(onB, roomId);
    expect(subscribed.present).toEqual(["alice", "bob"]);
    // carol was never present: her arrival on b changes the list alice sees on a.
    await subscribe(await open(b, carol), roomId);
    expect(
      await onA.next((f) => f.type === "presence" && f.present.includes("carol"), 10_000),
    ).toEqual({ type: "presence", roomId, present: ["alice", "bob", "carol"] });

    await api(a, alice.token, "POST", `/api/rooms/${roomId}/call/join`);
    const joined = await api<{ participants: string[] }>(
      b,
      bob.token,
      "POST",
      `/api/rooms/${roomId}/call/join`,
    );
    expect(joined.participants).toEqual(["alice", "bob"]);
    onA.send({ type: "signal", roomId, to: "bob", payload: { type: "offer", sdp: "v=0" } });
    expect(await onB.next((f) => f.type === "signal", 10_000)).toEqual({
      type: "signal",
      roomId,
      from: "alice",
      payload: { type: "offer", sdp: "v=0" },
    });
    await api(a, alice.token, "POST", `/api/rooms/${roomId}/call/leave`);
    await api(b, bob.token, "POST", `/api/rooms/${roomId}/call/leave`);
  });

  it("relays typing to subscribers on the other process, and a read marker to the user's tabs on both", async () => {
    const aliceOnA = await open(a, alice);
    const bobOnB = await open(b, bob);
    await subscribe(aliceOnA, roomId);
    await subscribe(bobOnB, roomId);
    aliceOnA.send({ type: "typing", roomId });
    expect(await bobOnB.next((f) => f.type === "typing", 10_000)).toEqual({
      type: "typing",
      roomId,
      username: "alice",
    });

    const bobOnA = await open(a, bob);
    const message = await post(a, alice, "read me on both");
    await api(b, bob.token, "PUT", `/api/rooms/${roomId}/read`, { messageId: message });
    const read = { type: "read", roomId, messageId: message };
    expect(await bobOnA.next((f) => f.type === "read", 10_000)).toEqual(read);
    expect(await bobOnB.next((f) => f.type === "read", 10_000)).toEqual(read);
  });

  it("ends the presence of a SIGKILLed process's users once its heartbeat expires", async () => {
    const watcher = await open(a, alice);
    await subscribe(watcher, roomId);
    const doomed = await openAuthenticated(b.url, bob.token);
    await subscribe(doomed, roomId);
    // bob is present (possibly still from the previous test's grace).
    await watcher
      .next((f) => f.type === "presence" && f.present.includes("bob"), 10_000)
      .catch(() => undefined);
    const before = receiver.requests.length;
    const killedAt = Date.now();
    await b.kill("SIGKILL");
    // Three missed heartbeats (600 ms) plus the grace (300 ms), noticed by a's sweep.
    const left = await watcher.next(
      (f) => f.type === "event" && f.event === "USER_LEFT_ROOM" && f.data.username === "bob",
      10_000,
    );
    expect(left.data).toEqual({ roomId, username: "bob", via: "presence" });
    // Not before its heartbeat (200 ms, last renewed at most then before the kill) is 600 ms stale.
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(600);
    expect(await watcher.next((f) => f.type === "presence")).toEqual({
      type: "presence",
      roomId,
      present: ["alice"],
    });
    // Other presences (carol's, from the test before) may end meanwhile: look for bob's.
    const isBobsLeave = (body: Frame) =>
      body.event === "USER_LEFT_ROOM" && body.data.username === "bob";
    for (let n = before + 1; ; n++) {
      const bodies = (await receiver.waitForRequests(n, 10_000))
        .slice(before)
        .map((r) => JSON.parse(r.body.toString()) as Frame);
      const leave = bodies.find(isBobsLeave);
      if (leave) {
        expect(leave.data).toEqual({ roomId, username: "bob", via: "presence" });
        break;
      }
    }
  });
});
