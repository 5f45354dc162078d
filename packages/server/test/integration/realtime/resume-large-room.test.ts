/**
 * Resuming a room whose missed messages far exceed a connection's send bound (4 MiB): the resume
 * goes out in chunks, each sent once the client has read the previous ones, so a reader that keeps
 * reading gets every message, in order, and is never closed as too slow. Many resumes at once read
 * the database a few at a time, and the rest of the server keeps answering meanwhile.
 */
import { beforeAll, expect, it } from "vitest";
import type { TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { createRoom, postMessages } from "../../helpers/fixtures.js";
import { listeningApp } from "../../helpers/listening-app.js";
import { createdMessageIds, subscribe } from "../../helpers/stream-socket.js";
import { joinRoom } from "../chat/chat-helpers.js";

/** 16,000 bytes of markdown: its .full+json frame carries it four times (content, raw, text, html). */
const CONTENT = "resume page ".repeat(1_333);
/** About 64 MB of frames: sixteen times the send bound. */
const LARGE_ROOM = 1_000;
const SMALL_ROOM = 80;
/** Resumes started at once; each would have been closed with 1013 after 50 messages. */
const CONCURRENT_RESUMES = 20;

describeEachDialect("resuming a large room on $name", (dialect) => {
  const server = listeningApp(dialect);
  let alice: TestUser;

  beforeAll(async () => {
    alice = await server.t.user("user", `alice-${dialect.name}`);
  });

  /** A room of alice's that `members` joined, with `messages` messages: its id, then theirs. */
  async function roomWith(messages: number, members: TestUser[] = []): Promise<number[]> {
    const { id: roomId } = await createRoom(server.t, alice, `resume-${messages}`);
    for (const member of members) await joinRoom(server.t, member, roomId);
    return [roomId, ...(await postMessages(server.t, alice, roomId, messages, CONTENT))];
  }

  it("sends a loopback reader all 1,000 messages of 16 KB from after 0, in order", async () => {
    const [roomId, ...ids] = await roomWith(LARGE_ROOM);
    const reader = await server.open(alice);
    await subscribe(reader, roomId!, 0);
    await reader.until(
      (frames) =>
        reader.ws.readyState !== reader.ws.OPEN ||
        frames.filter((f) => f.event === "MESSAGE_CREATED").length >= ids.length,
      30_000,
    );
    expect(reader.ws.readyState, `closed after ${createdMessageIds(reader).length} messages`).toBe(
      reader.ws.OPEN,
    );
    expect(createdMessageIds(reader)).toEqual(ids);
    for (const frame of reader.frames.filter((f) => f.event === "MESSAGE_CREATED"))
      expect(frame.data.message.content).toBe(CONTENT);
  }, 60_000);

  it("serves many resumes at once in full while /healthz stays fast", async () => {
    // Each user keeps to the per-user limit; the concurrent resumes come from several users.
    const readers: TestUser[] = [];
    for (let i = 0; i < CONCURRENT_RESUMES; i++)
      readers.push(await server.t.user("user", `reader${i}-${dialect.name}`));
    const [roomId, ...ids] = await roomWith(SMALL_ROOM, readers);
    const opened = await Promise.all(readers.map((user) => server.open(user)));
    const latencies: number[] = [];
    let done = false;
    const probe = (async () => {
      while (!done) {
        const started = performance.now();
        const res = await fetch(`${server.origin}/healthz`);
        await res.arrayBuffer();
        expect(res.status).toBe(200);
        latencies.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    try {
      for (const socket of opened) socket.send({ type: "subscribe", roomId, after: 0 });
      await Promise.all(
        opened.map((socket) =>
          socket.until(
            (frames) =>
              socket.ws.readyState !== socket.ws.OPEN ||
              frames.filter((f) => f.event === "MESSAGE_CREATED").length >= ids.length,
            30_000,
          ),
        ),
      );
    } finally {
      done = true;
      await probe;
    }
    for (const socket of opened) {
      expect(socket.ws.readyState, "a reader was closed").toBe(socket.ws.OPEN);
      expect(createdMessageIds(socket)).toEqual(ids);
    }
    // Resumes that queued whole pages stalled /healthz for seconds; 1 s leaves room for a loaded
    // two-core machine.
    expect(Math.max(...latencies)).toBeLessThan(1_000);
  }, 60_000);
});
