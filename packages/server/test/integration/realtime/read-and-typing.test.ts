import { describe, expect, it } from "vitest";
import type { TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { listeningApp } from "../../helpers/listening-app.js";
import { subscribe, type Frame } from "../../helpers/stream-socket.js";
import { recordEvents } from "../chat/chat-helpers.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

describeEachDialect("read and typing frames on $name", (dialect) => {
  const server = listeningApp(dialect);
  let counter = 0;

  async function call(user: TestUser, method: string, url: string, payload?: object) {
    const res = await server.t.app.inject({
      method: method as "GET",
      url,
      headers: user.headers,
      ...(payload ? { payload } : {}),
    });
    return { status: res.statusCode, body: (res.body ? res.json() : undefined) as Json };
  }

  async function people() {
    const n = ++counter;
    const alice = await server.t.user("user", `alice${n}-${dialect.name}`);
    const bob = await server.t.user("user", `bob${n}-${dialect.name}`);
    const room = await call(alice, "POST", "/api/rooms", { name: "r" });
    await call(bob, "POST", `/api/rooms/${room.body.id}/join`);
    return { alice, bob, roomId: room.body.id as number };
  }

  const isRead = (roomId: number) => (frame: Frame) =>
    frame.type === "read" && frame.roomId === roomId;
  const isTyping = (roomId: number) => (frame: Frame) =>
    frame.type === "typing" && frame.roomId === roomId;

  describe("read", () => {
    it("tells the user's other connections where the marker moved, and no one else", async () => {
      const { alice, bob, roomId } = await people();
      const first = await server.open(bob);
      const second = await server.open(bob);
      const other = await server.open(alice);
      const posted = await call(alice, "POST", `/api/rooms/${roomId}/messages`, { content: "hi" });
      await call(bob, "PUT", `/api/rooms/${roomId}/read`, { messageId: posted.body.id });
      const expected = { type: "read", roomId, messageId: posted.body.id };
      expect(await first.next(isRead(roomId))).toEqual(expected);
      expect(await second.next(isRead(roomId))).toEqual(expected);
      // A ping answered after the read was published: nothing for alice came before it.
      other.send({ type: "ping" });
      await other.next((frame) => frame.type === "pong");
      expect(other.frames.some(isRead(roomId))).toBe(false);
    });

    it("sends nothing when the marker did not move (an older message)", async () => {
      const { alice, bob, roomId } = await people();
      const older = await call(alice, "POST", `/api/rooms/${roomId}/messages`, { content: "1" });
      const newer = await call(alice, "POST", `/api/rooms/${roomId}/messages`, { content: "2" });
      const tab = await server.open(bob);
      await call(bob, "PUT", `/api/rooms/${roomId}/read`, { messageId: newer.body.id });
      await tab.next(isRead(roomId));
      await call(bob, "PUT", `/api/rooms/${roomId}/read`, { messageId: older.body.id });
      await call(bob, "PUT", `/api/rooms/${roomId}/read`, { messageId: newer.body.id });
      tab.send({ type: "ping" });
      await tab.next((frame) => frame.type === "pong");
      expect(tab.frames.filter(isRead(roomId))).toHaveLength(1);
    });
  });

  describe("typing", () => {
    it("reaches the room's other subscribers with the username, not the typist, and fires no event", async () => {
      const { alice, bob, roomId } = await people();
      const typist = await server.open(alice);
      const typistsOtherTab = await server.open(alice);
      const listener = await server.open(bob);
      for (const socket of [typist, typistsOtherTab, listener]) await subscribe(socket, roomId);
      const seen = recordEvents(server.t);
      typist.send({ type: "typing", roomId });
      expect(await listener.next(isTyping(roomId))).toEqual({
        type: "typing",
        roomId,
        username: alice.username,
      });
      seen.stop();
      expect(seen.events).toEqual([]);
      typistsOtherTab.send({ type: "ping" });
      await typistsOtherTab.next((frame) => frame.type === "pong");
      expect(typist.frames.some(isTyping(roomId))).toBe(false);
      expect(typistsOtherTab.frames.some(isTyping(roomId))).toBe(false);
    });

    it("relays at most one typing frame per 2 s per user and room, dropping the rest silently", async () => {
      const { alice, bob, roomId } = await people();
      const typist = await server.open(alice);
      const listener = await server.open(bob);
      await subscribe(typist, roomId);
      await subscribe(listener, roomId);
      for (let i = 0; i < 5; i++) typist.send({ type: "typing", roomId });
      await listener.next(isTyping(roomId));
      // Everything the typist sent was handled before this pong; then the frames it caused, if
      // any, would be on their way to bob before his own pong.
      typist.send({ type: "ping" });
      await typist.next((frame) => frame.type === "pong");
      listener.send({ type: "ping" });
      await listener.next((frame) => frame.type === "pong");
      expect(listener.frames.filter(isTyping(roomId))).toHaveLength(1);
      expect(typist.frames.filter((frame) => frame.type === "error")).toEqual([]);
    });

    it("refuses typing in a room the connection is not subscribed to, and a frame without roomId", async () => {
      const { alice, roomId } = await people();
      const carol = await server.t.user("user", `carol${counter}-${dialect.name}`);
      const outsider = await server.open(carol);
      outsider.send({ type: "typing", roomId });
      expect(await outsider.next((frame) => frame.type === "error")).toEqual({
        type: "error",
        code: "forbidden",
        roomId,
      });
      const member = await server.open(alice);
      member.send({ type: "typing" });
      expect(await member.next((frame) => frame.type === "error")).toMatchObject({
        code: "invalid_frame",
      });
    });
  });
});
