/**
 * The live stream's limits, against a real listening server: sockets per user (4429 past it),
 * per client address (429 before the upgrade), the stream's own budget beside the HTTP one (503
 * past it, while plain requests and admins still get through), the frame rate of a socket (1008
 * past it), and a socket whose frames wait is no longer read until they are handled.
 */
import type { AddressInfo, Socket } from "node:net";
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { CLOSE } from "../../../src/realtime/stream-frames.js";
import type { ConfigOverrides } from "../../../src/config/load-config.js";
import { createTestApp, type TestApp } from "../../helpers/build-app.js";
import { describeEachDialect, type TestDialect } from "../../helpers/dialects.js";
import { createRoom, postMessages } from "../../helpers/fixtures.js";
import {
  createdMessageIds,
  openAuthenticated,
  openStream,
  type Frame,
  type StreamSocket,
} from "../../helpers/stream-socket.js";
import { waitFor } from "../../helpers/wait-for.js";

/** 16,000 bytes of markdown: its .full+json frame carries it four times (content, raw, text, html). */
const CONTENT = "held frames ".repeat(1_333);

describeEachDialect("live-stream limits on $name", (dialect: TestDialect) => {
  const apps: TestApp[] = [];
  const sockets: StreamSocket[] = [];

  afterEach(async () => {
    for (const socket of sockets) socket.ws.resume();
    await Promise.all(sockets.splice(0).map((socket) => socket.close()));
    for (const t of apps.splice(0)) await t.close();
  });

  async function listening(overrides: ConfigOverrides = {}) {
    const t = await createTestApp(dialect, overrides);
    apps.push(t);
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    const origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    return { t, origin };
  }

  const track = (socket: StreamSocket) => {
    sockets.push(socket);
    return socket;
  };

  /** The status and body of an upgrade the server answered with HTTP instead of 101. */
  function refusedUpgrade(origin: string): Promise<{ status: number; body: Frame } | "upgraded"> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${origin.replace(/^http/, "ws")}/api/stream`, "parley.v1");
      ws.once("open", () => {
        ws.close();
        resolve("upgraded");
      });
      ws.once("unexpected-response", (_request, response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => (body += chunk.toString()));
        response.on("end", () =>
          resolve({ status: response.statusCode!, body: JSON.parse(body) as Frame }),
        );
      });
      ws.once("error", (error) => {
        if (!/Unexpected server response/.test(error.message)) reject(error);
      });
    });
  }

  async function metric(t: TestApp, name: string, labels: string): Promise<number> {
    const text = (await t.app.inject({ url: "/metrics" })).body;
    const match = new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, "m").exec(text);
    return match ? Number(match[1]) : 0;
  }

  it("closes a user's socket past the per-user limit with 4429, and keeps the others", async () => {
    const { t, origin } = await listening({ streamMaxSocketsPerUser: 3 });
    const mallory = await t.user("user", "mallory");
    const alice = await t.user("user", "alice");
    const kept: StreamSocket[] = [];
    for (let i = 0; i < 3; i++) kept.push(track(await openAuthenticated(origin, mallory.token)));

    const extra = track(await openStream(origin));
    extra.send({ type: "auth", token: mallory.token });
    expect(await extra.closed).toEqual({
      code: CLOSE.tooManySockets,
      reason: "this user already has 3 live-stream sockets on this process",
    });
    expect(extra.frames).toEqual([]);
    expect(await metric(t, "parley_stream_refused_total", 'limit="user"')).toBe(1);

    // The user's other sockets, and other users, are unaffected.
    for (const socket of kept) {
      socket.send({ type: "ping" });
      expect(await socket.next()).toEqual({ type: "pong" });
    }
    track(await openAuthenticated(origin, alice.token));
    // A place given back is taken again.
    await kept[0]!.close();
    await waitFor("the closed socket to be let go", async () => {
      const again = await openStream(origin);
      again.send({ type: "auth", token: mallory.token });
      const first = await Promise.race([again.next(), again.closed]);
      track(again);
      return "type" in first && first.type === "ready";
    });
  });

  it("answers an upgrade past the per-address limit with 429 before upgrading it", async () => {
    const { t, origin } = await listening({
      streamMaxSocketsPerAddress: 4,
      streamMaxSocketsPerUser: 10,
    });
    const alice = await t.user("user", "alice");
    // Authenticated or not, each socket from the address counts.
    const held = [track(await openAuthenticated(origin, alice.token))];
    for (let i = 0; i < 3; i++) held.push(track(await openStream(origin)));

    const refused = await refusedUpgrade(origin);
    expect(refused).toMatchObject({
      status: 429,
      body: { code: "rate_limited", limit: 4, status: 429 },
    });
    expect(await metric(t, "parley_stream_refused_total", 'limit="address"')).toBe(1);
    // Plain requests from the same address are not the stream's to count.
    const rooms = await fetch(`${origin}/api/rooms`, { headers: alice.headers });
    expect(rooms.status).toBe(200);

    await held[1]!.close();
    await waitFor(
      "the address's place to be given back",
      async () => (await refusedUpgrade(origin)) === "upgraded",
    );
  });

  it("gives the stream a budget of its own: with it spent, requests and admins get through", async () => {
    // Before, the stream's sockets took the places of requests under one connection cap.
    const { t, origin } = await listening({
      httpMaxConnections: 4,
      streamMaxSockets: 6,
      streamMaxSocketsPerUser: 10,
      streamMaxSocketsPerAddress: 10,
    });
    const mallory = await t.user("user", "mallory");
    const alice = await t.user("user", "alice");
    for (let i = 0; i < 6; i++) track(await openAuthenticated(origin, mallory.token));

    const refused = await refusedUpgrade(origin);
    expect(refused).toMatchObject({ status: 503, body: { code: "service_unavailable" } });
    expect((refused as { status: number }).status).toBe(503);
    expect(await metric(t, "parley_stream_refused_total", 'limit="process"')).toBe(1);

    // Four requests at once, each on its own connection: the HTTP budget is whole.
    const answers = await Promise.all([
      fetch(`${origin}/healthz`),
      fetch(`${origin}/api/rooms`, { headers: alice.headers }),
      fetch(`${origin}/api/admin/users`, { headers: t.admin.headers }),
      fetch(`${origin}/api/rooms`, { headers: mallory.headers }),
    ]);
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200]);
    await Promise.all(answers.map((res) => res.arrayBuffer()));
  });

  it("closes a socket sending frames past its rate with 1008, having handled at most the burst", async () => {
    const { t, origin } = await listening({ streamFramesPerSecond: 10, streamFrameBurst: 20 });
    const alice = await t.user("user", "alice");
    const socket = track(await openAuthenticated(origin, alice.token));
    // The auth frame took one token; nineteen frames at once are within the burst.
    for (let i = 0; i < 19; i++) socket.send({ type: "ping" });
    await socket.until((frames) => frames.filter((f) => f.type === "pong").length === 19);

    const flooder = track(await openAuthenticated(origin, alice.token));
    for (let i = 0; i < 5_000; i++) flooder.send({ type: "ping" });
    expect(await flooder.closed).toEqual({
      code: CLOSE.policyViolation,
      reason: "more than 20 frames at once or 10 per second",
    });
    expect(flooder.frames.filter((f) => f.type === "pong").length).toBeLessThanOrEqual(20);
    expect(await metric(t, "parley_stream_refused_total", 'limit="frame_rate"')).toBe(1);
    // The socket within its rate stays.
    socket.send({ type: "ping" });
    await socket.until((frames) => frames.filter((f) => f.type === "pong").length === 20);
  });

  describe("a socket whose frames wait", () => {
    it("is not read while 32 of its frames wait, and is read again once they are handled", async () => {
      const { t, origin } = await listening();
      const alice = await t.user("user", "alice");
      const { id: roomId } = await createRoom(t, alice, "large");
      // About 13 MB of frames: more than the send bound and the socket buffers of a reader that
      // does not read, so the resume waits for the reader.
      const ids = await postMessages(t, alice, roomId, 200, CONTENT);

      let serverSide: Socket | undefined;
      t.app.server.once("connection", (socket: Socket) => (serverSide = socket));
      const reader = track(await openAuthenticated(origin, alice.token));
      reader.ws.pause();
      reader.send({ type: "subscribe", roomId, after: 0 });
      // The resume has filled what the reader's socket holds and waits for it to read.
      await waitFor(
        "the resume to wait for the reader",
        async () =>
          Number(
            /^parley_stream_send_buffer_bytes (\S+)$/m.exec(
              (await t.app.inject({ url: "/metrics" })).body,
            )?.[1],
          ) >
          1024 * 1024,
      );
      expect(serverSide!.isPaused()).toBe(false);
      // Frames behind the resume wait; past 32 the server stops reading the socket.
      for (let i = 0; i < 40; i++) reader.send({ type: "ping" });
      await waitFor("the server to stop reading the socket", () => serverSide!.isPaused());

      reader.ws.resume();
      await reader.until((frames) => frames.filter((f) => f.type === "pong").length === 40, 30_000);
      expect(createdMessageIds(reader)).toEqual(ids);
      expect(serverSide!.isPaused()).toBe(false);
      reader.send({ type: "ping" });
      await reader.until((frames) => frames.filter((f) => f.type === "pong").length === 41);
    }, 60_000);
  });
});
