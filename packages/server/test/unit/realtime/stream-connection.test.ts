import { EventEmitter } from "node:events";
import type { WebSocket } from "ws";
import { describe, expect, it } from "vitest";
import { FrameFlusher, StreamConnection } from "../../../src/realtime/stream-connection.js";
import { prepareTextFrame } from "../../../src/realtime/prepared-frame.js";
import { parseClientFrame } from "../../../src/realtime/stream-frames.js";

/** A socket whose client reads nothing: every byte sent stays buffered. */
function stalledSocket() {
  const socket = Object.assign(new EventEmitter(), {
    OPEN: 1,
    readyState: 1,
    bufferedAmount: 0,
    sent: [] as string[],
    closedWith: undefined as undefined | { code: number; reason: string },
    send(frame: Buffer) {
      this.sent.push(frame.toString());
      this.bufferedAmount += frame.length;
    },
    close(code: number, reason: string) {
      this.closedWith = { code, reason };
      this.readyState = 3;
    },
    terminate() {},
  });
  return socket;
}

/** A connection on a stalled socket, allowed `maxUnread` unread bytes, counting its drops. */
function stalledConnection(maxUnread: number, flusher = new FrameFlusher()) {
  const socket = stalledSocket();
  const dropped = { count: 0 };
  const connection = new StreamConnection(
    socket as unknown as WebSocket,
    maxUnread,
    () => dropped.count++,
    flusher,
  );
  return { socket, flusher, connection, dropped };
}

describe("StreamConnection send queue", () => {
  it("drops a reader whose unread frames would pass the limit, and sends nothing more", () => {
    const { socket, flusher, connection, dropped } = stalledConnection(1_000);
    const frame = "x".repeat(300);
    expect(connection.send(frame)).toBe(true);
    flusher.flush();
    // Queued and not yet written counts as unread too.
    expect([2, 3].map(() => connection.send(frame))).toEqual([true, true]);
    expect(socket.sent).toHaveLength(1);
    expect(connection.send(frame)).toBe(false);
    expect(socket.closedWith).toEqual({
      code: 1013,
      reason: "too slow: send queue full; reconnect and resume with after",
    });
    expect(dropped.count).toBe(1);
    expect(connection.send("y")).toBe(false);
    // What was queued before the close went out before it.
    expect(socket.sent).toHaveLength(3);
  });

  it("writes what one turn queued after it, in order", async () => {
    const { socket, connection } = stalledConnection(1_000_000, new FrameFlusher(1_000));
    connection.send("a");
    connection.sendJson({ b: 1 });
    expect(socket.sent).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(socket.sent).toEqual(["a", '{"b":1}']);
    // A quick flush: the next frame waits three times nothing, not the 1 s maximum.
    const queuedAt = performance.now();
    connection.send("c");
    while (socket.sent.length < 3) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(socket.sent).toEqual(["a", '{"b":1}', "c"]);
    expect(performance.now() - queuedAt).toBeLessThan(500);
  });

  it("after a slow flush, waits three times its duration, at most the maximum", async () => {
    for (const [maxDelayMs, minimum, maximum] of [
      [1_000, 28, 200],
      [15, 13, 200],
    ] as const) {
      const { socket, connection } = stalledConnection(1_000_000, new FrameFlusher(maxDelayMs));
      const send = socket.send.bind(socket);
      socket.send = (frame: Buffer) => {
        const until = performance.now() + 10;
        while (performance.now() < until); // a write that takes 10 ms
        send(frame);
      };
      connection.send("a");
      await new Promise((resolve) => setImmediate(resolve));
      expect(socket.sent).toEqual(["a"]);
      const queuedAt = performance.now();
      connection.send("b");
      while (socket.sent.length < 2) await new Promise((resolve) => setTimeout(resolve, 1));
      const waited = performance.now() - queuedAt;
      expect(waited).toBeGreaterThanOrEqual(minimum);
      expect(waited).toBeLessThan(maximum);
    }
  });

  it("keeps a reader that reads: the limit is on unread bytes, not on the total", () => {
    const { socket, flusher, connection } = stalledConnection(1_000);
    for (let i = 0; i < 100; i++) {
      expect(connection.send("x".repeat(300))).toBe(true);
      flusher.flush();
      socket.bufferedAmount = 0; // the client read it
    }
    expect(socket.closedWith).toBeUndefined();
  });

  it("holds a catching-up room's frames and drops a resumed message's live copy once", () => {
    const { socket, flusher, connection } = stalledConnection(1_000_000);
    connection.subscriptions.set(7, { roomId: 7, pending: [], heldBytes: 0, replayed: undefined });
    connection.sendRoomFrame(7, "held", 1);
    connection.sendRoomFrame(8, "not subscribed");
    flusher.flush();
    expect(socket.sent).toEqual([]);
    const subscription = connection.subscriptions.get(7)!;
    expect(connection.release(subscription)).toEqual([{ frame: "held", messageId: 1 }]);
    subscription.replayed = new Set([2]);
    connection.sendRoomFrame(7, "late copy of 2", 2);
    connection.sendRoomFrame(7, "second live 2", 2);
    flusher.flush();
    expect(socket.sent).toEqual(["second live 2"]);
  });

  it("counts held frames against the bound: a room busier than its catching-up reader drops it", () => {
    const { socket, flusher, connection, dropped } = stalledConnection(1_000);
    const subscription = { roomId: 7, pending: [], heldBytes: 0, replayed: undefined };
    connection.subscriptions.set(7, subscription);
    expect(connection.send("x".repeat(400))).toBe(true);
    flusher.flush();
    connection.sendRoomFrame(7, "h".repeat(400), 1);
    expect(subscription.heldBytes).toBe(400);
    // 400 unread + 400 held + 300 more would pass 1,000.
    connection.sendRoomFrame(7, "h".repeat(300), 2);
    expect(socket.closedWith?.code).toBe(1013);
    expect(dropped.count).toBe(1);
  });

  it("lets a resume send while the reader keeps up, and makes it wait while it does not", async () => {
    const { socket, flusher, connection } = stalledConnection(8_000);
    // Up to half the bound, at once.
    expect(await connection.waitToSend(3_000)).toBe(true);
    connection.send("x".repeat(3_000));
    flusher.flush();
    let waited = false;
    const waiting = connection.waitToSend(2_000).then((ok) => ((waited = true), ok));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(waited).toBe(false);
    // The reader reads all but an eighth of the bound: the resume goes on.
    socket.bufferedAmount = 1_000;
    expect(await waiting).toBe(true);
    // A connection that closes while a resume waits ends the resume.
    socket.bufferedAmount = 4_000;
    const ended = connection.waitToSend(2_000);
    connection.close(1001, "going away");
    expect(await ended).toBe(false);
  });
});

describe("FrameFlusher", () => {
  /** A ws socket as the fast path sees it: an idle sender and the TCP socket under it. */
  function rawSocket() {
    const writes: Buffer[] = [];
    const socket = Object.assign(stalledSocket(), {
      _sender: { _state: 0, _queue: [] },
      _socket: { write: (bytes: Buffer) => writes.push(bytes) > 0 },
    });
    return { socket: socket as unknown as WebSocket, writes };
  }

  it("writes a connection's frames of one flush in one write, joined once for all alike", () => {
    const flusher = new FrameFlusher();
    const [a, b, c] = [rawSocket(), rawSocket(), rawSocket()];
    const connections = [a, b, c].map(
      ({ socket }) => new StreamConnection(socket, 1_000_000, () => {}, flusher),
    );
    const first = prepareTextFrame("first");
    const second = prepareTextFrame("second");
    for (const connection of connections) connection.send(first);
    connections[0]!.send(second);
    connections[1]!.send(second);
    connections[2]!.send("only c");
    flusher.flush();
    expect(a.writes).toHaveLength(1);
    expect(a.writes[0]).toBe(b.writes[0]);
    expect(a.writes[0]).toEqual(Buffer.concat([first.wire, second.wire]));
    expect(c.writes).toEqual([Buffer.concat([first.wire, prepareTextFrame("only c").wire])]);
  });

  it("writes each connection its own frames when their sequences differ", () => {
    const flusher = new FrameFlusher();
    const first = prepareTextFrame("first");
    const clients = Array.from({ length: 20 }, () => rawSocket());
    clients.forEach(({ socket }, i) => {
      const connection = new StreamConnection(socket, 1_000_000, () => {}, flusher);
      connection.send(first);
      connection.send(`reply ${i}`);
    });
    flusher.flush();
    clients.forEach(({ writes }, i) =>
      expect(writes).toEqual([Buffer.concat([first.wire, prepareTextFrame(`reply ${i}`).wire])]),
    );
  });
});

describe("parseClientFrame", () => {
  it.each([
    ['{"type":"auth","token":"t"}', { type: "auth", token: "t" }],
    ['{"type":"subscribe","roomId":3}', { type: "subscribe", roomId: 3 }],
    ['{"type":"subscribe","roomId":3,"after":0}', { type: "subscribe", roomId: 3, after: 0 }],
    ['{"type":"unsubscribe","roomId":3}', { type: "unsubscribe", roomId: 3 }],
    [
      '{"type":"signal","roomId":3,"to":"b","payload":{"a":1}}',
      { type: "signal", roomId: 3, to: "b", payload: { a: 1 } },
    ],
    ['{"type":"ping"}', { type: "ping" }],
  ])("reads %s", (text, frame) => {
    expect(parseClientFrame(text)).toEqual(frame);
  });

  it.each([
    "not json",
    "[]",
    '{"type":"auth"}',
    '{"type":"subscribe","roomId":"3"}',
    '{"type":"subscribe","roomId":3,"after":-1}',
    '{"type":"subscribe","roomId":0}',
    '{"type":"signal","roomId":3,"to":"b"}',
    '{"type":"dance"}',
  ])("refuses %s", (text) => {
    expect(parseClientFrame(text)).toBeUndefined();
  });
});
