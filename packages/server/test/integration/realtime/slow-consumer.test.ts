/**
 * A real slow reader: a WebSocket client that stops reading its socket while its room is flooded.
 * The server holds at most the connection's bound of unread bytes for it (4 MiB: the frames queued
 * plus what `ws` buffers; what the kernel's socket buffers absorb comes on top and costs the
 * process nothing), then closes it with 1013 and counts it in
 * parley_stream_slow_consumers_dropped_total; the other subscriber of the room receives every
 * message throughout, and the dropped reader resumes with `after` without losing one.
 */
import { beforeAll, expect, it } from "vitest";
import { CLOSE } from "../../../src/realtime/stream-frames.js";
import type { TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { createRoom } from "../../helpers/fixtures.js";
import { listeningApp } from "../../helpers/listening-app.js";
import { createdMessageIds, subscribe } from "../../helpers/stream-socket.js";
import { waitFor } from "../../helpers/wait-for.js";
import { joinRoom } from "../chat/chat-helpers.js";

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
  const server = listeningApp(dialect);
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    alice = await server.t.user("user", `alice-${dialect.name}`);
    bob = await server.t.user("user", `bob-${dialect.name}`);
  });

  async function metric(name: string): Promise<number> {
    const text = (await server.t.app.inject({ url: "/metrics" })).body;
    const match = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
    if (!match) throw new Error(`${name} is not on /metrics`);
    return Number(match[1]);
  }

  async function post(roomId: number): Promise<number> {
    const res = await server.t.app.inject({
      method: "POST",
      url: `/api/rooms/${roomId}/messages`,
      headers: alice.headers,
      payload: { content: CONTENT },
    });
    expect(res.statusCode).toBe(201);
    return res.json().id as number;
  }

  it("drops a reader that stops reading once its unread bytes pass the bound, and only it", async () => {
    const { id: roomId } = await createRoom(server.t, alice, "flood");
    await joinRoom(server.t, bob, roomId);

    const fast = await server.open(alice);
    const slow = await server.open(bob);
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
    const received = createdMessageIds(slow);
    expect(received).toEqual(createdMessageIds(fast).slice(0, received.length));
    expect(received.length).toBeLessThan(posted.length);

    // The room goes on for the reader that kept up; the server no longer holds anything for bob.
    const later = await post(roomId);
    await fast.next((f) => f.data?.messageId === later);
    const sorted = (ids: number[]) => [...ids].sort((x, y) => x - y);
    expect(sorted(createdMessageIds(fast))).toEqual(sorted([...posted, later]));
    // The server lets go of bob's socket once the close handshake it started is done.
    await waitFor(
      "bob's connection to be released",
      async () => (await metric("parley_stream_connections")) === 1,
    );
    expect(await metric("parley_stream_send_buffer_bytes")).toBe(0);

    // And bob, resuming after the last message he got, misses none.
    const again = await server.open(bob);
    await subscribe(again, roomId, received.at(-1));
    await again.until((frames) => frames.some((f) => f.data?.messageId === later));
    const missed = createdMessageIds(fast).slice(received.length);
    expect(sorted(createdMessageIds(again))).toEqual(sorted(missed));
    expect(new Set(createdMessageIds(again)).size).toBe(missed.length);
  }, 30_000);
});
