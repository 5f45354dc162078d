import { EventEmitter } from "node:events";
import type { WebSocket } from "ws";
import { describe, expect, it } from "vitest";
import { StreamConnection } from "../../../src/realtime/stream-connection.js";
import { parseClientFrame } from "../../../src/realtime/stream-frames.js";

/** A socket whose client reads nothing: every byte sent stays buffered. */
function stalledSocket() {
  const socket = Object.assign(new EventEmitter(), {
    OPEN: 1,
    readyState: 1,
    bufferedAmount: 0,
    sent: [] as string[],
    closedWith: undefined as undefined | { code: number; reason: string },
    send(frame: string) {
      this.sent.push(frame);
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

describe("StreamConnection send queue", () => {
  it("drops a reader whose unread frames would pass the limit, and sends nothing more", () => {
    const socket = stalledSocket();
    let dropped = 0;
    const connection = new StreamConnection(socket as unknown as WebSocket, 1_000, () => dropped++);
    const frame = "x".repeat(300);
    expect([1, 2, 3].map(() => connection.send(frame))).toEqual([true, true, true]);
    expect(connection.send(frame)).toBe(false);
    expect(socket.closedWith).toEqual({
      code: 1013,
      reason: "too slow: send queue full; reconnect and resume with after",
    });
    expect(dropped).toBe(1);
    expect(connection.send("y")).toBe(false);
    expect(socket.sent).toHaveLength(3);
  });

  it("keeps a reader that reads: the limit is on unread bytes, not on the total", () => {
    const socket = stalledSocket();
    const connection = new StreamConnection(socket as unknown as WebSocket, 1_000, () => {});
    for (let i = 0; i < 100; i++) {
      expect(connection.send("x".repeat(300))).toBe(true);
      socket.bufferedAmount = 0; // the client read it
    }
    expect(socket.closedWith).toBeUndefined();
  });

  it("holds a catching-up room's frames and drops a resumed message's live copy once", () => {
    const socket = stalledSocket();
    const connection = new StreamConnection(socket as unknown as WebSocket, 1_000_000, () => {});
    connection.subscriptions.set(7, { roomId: 7, pending: [], replayed: undefined });
    connection.sendRoomFrame(7, "held", 1);
    connection.sendRoomFrame(8, "not subscribed");
    expect(socket.sent).toEqual([]);
    const subscription = connection.subscriptions.get(7)!;
    subscription.pending = undefined;
    subscription.replayed = new Set([2]);
    connection.sendRoomFrame(7, "late copy of 2", 2);
    connection.sendRoomFrame(7, "second live 2", 2);
    expect(socket.sent).toEqual(["second live 2"]);
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
