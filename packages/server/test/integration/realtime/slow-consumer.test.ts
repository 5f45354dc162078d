/**
 * A real slow reader: a WebSocket client that stops reading its socket while its room is flooded.
 * The server holds at most the connection's bound of unread bytes for it (4 MiB: the frames queued
 * plus what `ws` buffers; what the kernel's socket buffers absorb comes on top and costs the
 * process nothing), then closes it with 1013 and counts it in
 * parley_stream_slow_consumers_dropped_total; the other subscriber of the room receives every
 * message throughout, and the dropped reader resumes with `after` without losing one.
 */
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { CLOSE } from "../../../src/realtime/stream-frames.js";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { waitFor } from "../../helpers/wait-for.js";
import {
  openAuthenticated,
  subscribe,
  type Frame,
  type StreamSocket,
} from "../../helpers/stream-socket.js";

/** The gateway's default bound on a connection's unread bytes (StreamGatewayOptions). */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** Posts in flight at once; each batch is checked before the next goes out. */
const BATCH = 4;
/**
 * Far more than the bound plus the kernel buffers of a loopback connection (a few MiB): a reader
 * not dropped after this many frames never will be.
 */
const MAX_POSTS = 400;
/** 16,000 bytes of markdown: its .full+json frame carries it four times (content, raw, text, html). */
const CONTENT = "slow reader ".repeat(1_333);

describeEachDialect("a slow reader on the live stream on $name", (dialect) => {
  let t: TestApp;
  let origin: string;
  let alice: TestUser;
  let bob: TestUser;
  const sockets: StreamSocket[] = [];

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    alice = await t.user("user", `alice-${dialect.name}`);
    bob = await t.user("user", `bob-${dialect.name}`);
  });
  afterEach(async () => {
    // A paused socket would never read the close handshake's answer.
    for (const socket of sockets) socket.ws.resume();
    await Promise.all(sockets.splice(0).map((socket) => socket.close()));
  });
  afterAll(async () => {
    await t?.close();
  });

  async function metric(name: string): Promise<number> {
    const text = (await t.app.inject({ url: "/metrics" })).body;
    const match = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
    if (!match) throw new Error(`${name} is not on /metrics`);
    return Number(match[1]);
  }

  async function post(roomId: number): Promise<number> {
    const res = await t.app.inject({
      method: "POST",
      url: `/api/rooms/${roomId}/messages`,
      headers: alice.headers,
      payload: { content: CONTENT },
    });
    expect(res.statusCode).toBe(201);
    return res.json().id as number;
  }

  const messageIds = (socket: StreamSocket) =>
    socket.frames
      .filter((f: Frame) => f.type === "event" && f.event === "MESSAGE_CREATED")
      .map((f) => f.data.messageId as number);

  it("drops a reader that stops reading once its unread bytes pass the bound, and only it", async () => {
    const room = await t.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: alice.headers,
      payload: { name: "flood" },
    });
    const roomId = room.json().id as number;
    await t.app.inject({ method: "POST", url: `/api/rooms/${roomId}/join`, headers: bob.headers });

    const fast = await openAuthenticated(origin, alice.token);
    sockets.push(fast);
    const slow = await openAuthenticated(origin, bob.token);
    sockets.push(slow);
    await subscribe(fast, roomId);
    await subscribe(slow, roomId);
    // Bob's client stops reading: what the server writes piles up in the kernel buffers, then in
    // the server's own.
    slow.ws.pause();
    const droppedBefore = await metric("parley_stream_slow_consumers_dropped_total");

    const posted: number[] = [];
    let peakBuffered = 0;
    let dropped = false;
    // Until the drop; or until the server holds more than the bound, which fails below.
    while (!dropped && posted.length < MAX_POSTS && peakBuffered <= MAX_BUFFERED_BYTES) {
      posted.push(...(await Promise.all(Array.from({ length: BATCH }, () => post(roomId)))));
      // Every frame so far was written to both readers once the fast one has them all: what the
      // server now holds unread is the slow reader's (the fast one has read everything).
      await fast.until((frames) => {
        const got = new Set(frames.map((f) => f.data?.messageId));
        return posted.every((id) => got.has(id));
      });
      peakBuffered = Math.max(peakBuffered, await metric("parley_stream_send_buffer_bytes"));
      dropped = (await metric("parley_stream_slow_consumers_dropped_total")) > droppedBefore;
    }
    // The server held up to its bound for the stalled reader, and never more.
    expect(peakBuffered).toBeLessThanOrEqual(MAX_BUFFERED_BYTES);
    expect(peakBuffered).toBeGreaterThan(MAX_BUFFERED_BYTES / 2);
    expect(dropped, `no slow reader dropped after ${posted.length} frames`).toBe(true);
    expect(await metric("parley_stream_slow_consumers_dropped_total")).toBe(droppedBefore + 1);

    // Bob reads again: the frames written before the drop, then the close, with 1013.
    slow.ws.resume();
    expect(await slow.closed).toMatchObject({ code: CLOSE.tooSlow });
    // In the room's commit order (the fast reader's), with no gap: a prefix of what it got.
    const received = messageIds(slow);
    expect(received).toEqual(messageIds(fast).slice(0, received.length));
    expect(received.length).toBeLessThan(posted.length);

    // The room goes on for the reader that kept up; the server no longer holds anything for bob.
    const later = await post(roomId);
    await fast.next((f) => f.data?.messageId === later);
    const sorted = (ids: number[]) => [...ids].sort((x, y) => x - y);
    expect(sorted(messageIds(fast))).toEqual(sorted([...posted, later]));
    // The server lets go of bob's socket once the close handshake it started is done.
    await waitFor(
      "bob's connection to be released",
      async () => (await metric("parley_stream_connections")) === 1,
    );
    expect(await metric("parley_stream_send_buffer_bytes")).toBe(0);

    // And bob, resuming after the last message he got, misses none.
    const again = await openAuthenticated(origin, bob.token);
    sockets.push(again);
    await subscribe(again, roomId, received.at(-1));
    await again.until((frames) => frames.some((f) => f.data?.messageId === later));
    const missed = messageIds(fast).slice(received.length);
    expect(sorted(messageIds(again))).toEqual(sorted(missed));
    expect(new Set(messageIds(again)).size).toBe(missed.length);
  }, 30_000);
});
