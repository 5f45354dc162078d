/**
 * The stream carries committed events only: an event emitted by a unit of work that then rolls
 * back never reaches a subscriber, on either database (SQLite: the spine announces a unit's events
 * after its commit, and a unit that throws inside a shared batch is rolled back to its savepoint;
 * PostgreSQL: the NOTIFY is sent inside the transaction and dropped with it). Each test waits for
 * the next committed event of the room, which the contract delivers after anything committed or
 * leaked before it (commit order within a room), and only then looks for the rolled-back one.
 */
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { eventData } from "../../../src/events/event-catalogue.js";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import {
  openAuthenticated,
  subscribe,
  type Frame,
  type StreamSocket,
} from "../../helpers/stream-socket.js";
import { failFanOutAfterWriting, post } from "../chat/chat-helpers.js";

describeEachDialect("rolled-back events on the live stream on $name", (dialect) => {
  let t: TestApp;
  let origin: string;
  let alice: TestUser;
  let counter = 0;
  const sockets: StreamSocket[] = [];

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    alice = await t.user("user", `alice-${dialect.name}`);
  });
  afterEach(async () => {
    await Promise.all(sockets.splice(0).map((socket) => socket.close()));
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A new room of alice's, with alice subscribed to it (no `after`: nothing older is sent). */
  async function subscribedRoom(): Promise<{ roomId: number; socket: StreamSocket }> {
    const room = await t.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: alice.headers,
      payload: { name: `rollback ${++counter}` },
    });
    const roomId = room.json().id as number;
    const socket = await openAuthenticated(origin, alice.token);
    sockets.push(socket);
    expect(await subscribe(socket, roomId)).toMatchObject({ type: "subscribed", roomId });
    return { roomId, socket };
  }

  async function postOk(roomId: number, content: string): Promise<number> {
    const res = await post(t, alice, roomId, content);
    expect(res.statusCode).toBe(201);
    return res.json().id as number;
  }

  /** A unit of work that inserts a message of alice's and emits its MESSAGE_CREATED. */
  function insertAndEmit(roomId: number, content: string): Promise<number> {
    return t.ctx.database.transaction(async (tx) => {
      const now = Date.now();
      const row = await tx.db
        .insertInto("messages")
        .values({
          room_id: roomId,
          sender_user_id: alice.id,
          inbound_webhook_id: null,
          sender_display_name: alice.username,
          sender_avatar_url: null,
          content,
          content_format: "markdown",
          moderation_status: "none",
          created_at: now,
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      await tx.emit(
        "MESSAGE_CREATED",
        eventData.messageCreated({
          roomId,
          messageId: row.id,
          senderId: alice.id,
          createdAt: now,
          threadId: null,
          mentions: [],
        }),
      );
      return row.id;
    });
  }

  const messageEvents = (socket: StreamSocket) =>
    socket.frames.filter((f: Frame) => f.type === "event" && f.event === "MESSAGE_CREATED");

  it("sends nothing for a post that rolls back, then the next committed post", async () => {
    const { roomId, socket } = await subscribedRoom();
    const restore = failFanOutAfterWriting(t);
    let failed;
    try {
      failed = await post(t, alice, roomId, "rolled back");
    } finally {
      restore();
    }
    expect(failed.statusCode).toBe(500);

    const next = await postOk(roomId, "committed");
    await socket.next((f) => f.event === "MESSAGE_CREATED" && f.data.messageId === next);
    expect(messageEvents(socket).map((f) => f.data.message.content)).toEqual(["committed"]);
  });

  it("sends nothing for a membership join that rolls back, then the next committed event", async () => {
    const { roomId, socket } = await subscribedRoom();
    const bob = await t.user("user", `bob-${dialect.name}-${counter}`);
    const restore = failFanOutAfterWriting(t);
    let failed;
    try {
      failed = await t.app.inject({
        method: "POST",
        url: `/api/rooms/${roomId}/join`,
        headers: bob.headers,
      });
    } finally {
      restore();
    }
    expect(failed.statusCode).toBe(500);

    const next = await postOk(roomId, "after the failed join");
    await socket.next((f) => f.event === "MESSAGE_CREATED" && f.data.messageId === next);
    // USER_JOINED_ROOM frames carry their data as emitted (nothing is loaded that could hide a
    // leaked one), so the absence is the stream's doing.
    expect(
      socket.frames.filter((f) => f.type === "event" && f.data.username === bob.username),
    ).toEqual([]);
  });

  it("drops a unit that emitted MESSAGE_CREATED and threw, and delivers the unit committed beside it", async () => {
    // A message committed before the subscription: a unit re-announcing it (as a moderation
    // approval does) and then failing must not put it on the stream, where, the row being there,
    // a leaked event would show as a frame.
    const { roomId, socket } = await subscribedRoom();
    const existing = await insertAndEmit(roomId, "existing");
    await socket.next((f) => f.event === "MESSAGE_CREATED" && f.data.messageId === existing);

    // Queued in the same turn, so on SQLite they share one transaction (one savepoint each): the
    // first is rolled back to its savepoint, the second commits.
    const failing = t.ctx.database.transaction(async (tx) => {
      await tx.emit(
        "MESSAGE_CREATED",
        eventData.messageCreated({
          roomId,
          messageId: existing,
          senderId: alice.id,
          createdAt: Date.now(),
          threadId: null,
          mentions: [],
        }),
      );
      throw new Error("the unit fails after emitting");
    });
    const committed = insertAndEmit(roomId, "committed beside it");
    await expect(failing).rejects.toThrow("the unit fails after emitting");
    const next = await committed;

    await socket.next((f) => f.event === "MESSAGE_CREATED" && f.data.messageId === next);
    expect(messageEvents(socket).map((f) => f.data.messageId)).toEqual([existing, next]);
  });
});
