import type { AddressInfo } from "node:net";
import WebSocket from "ws";
import {
  createStreamClient,
  type StreamClient,
  type StreamEventFrame,
  type StreamState,
  type WebSocketConstructor,
} from "@parley/client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";

/** The ws package, remembering every socket it opened so a test can cut one. */
function recordingWebSocket() {
  const opened: WebSocket[] = [];
  class Recording extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols);
      opened.push(this);
    }
  }
  return { Impl: Recording as unknown as WebSocketConstructor, opened };
}

function waitFor<T>(subscribe: (done: (value: T) => void) => () => void, timeoutMs = 5_000) {
  const where = new Error("timed out waiting here");
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(where), timeoutMs);
    const off = subscribe((value) => {
      clearTimeout(timer);
      off();
      resolve(value);
    });
  });
}

describeEachDialect("@parley/client stream client on $name", (dialect) => {
  let t: TestApp;
  let origin: string;
  let erin: TestUser;
  let roomId: number;
  const clients: StreamClient[] = [];

  beforeAll(async () => {
    t = await createTestApp(dialect, { presenceGraceMs: 300 });
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    erin = await t.user("user", `erin-${dialect.name}`);
    const room = await t.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: erin.headers,
      payload: { name: "client" },
    });
    roomId = room.json().id;
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await t?.close();
  });

  const post = async (content: string) =>
    (
      await t.app.inject({
        method: "POST",
        url: `/api/rooms/${roomId}/messages`,
        headers: erin.headers,
        payload: { content },
      })
    ).json().id as number;

  it("resumes after a dropped connection with every message exactly once, and keeps presence", async () => {
    const { Impl, opened } = recordingWebSocket();
    const client = createStreamClient({
      baseUrl: origin,
      token: erin.token,
      WebSocket: Impl,
      minReconnectDelayMs: 50,
    });
    clients.push(client);
    const states: StreamState[] = [];
    client.on("state", (state) => states.push(state));
    const messages: number[] = [];
    client.on("event", (frame: StreamEventFrame) => {
      if (frame.event === "MESSAGE_CREATED") messages.push(frame.data.messageId);
    });
    client.subscribe(roomId);
    await waitFor<number>((done) =>
      client.on("presence", (room, present) => present.includes(erin.username) && done(room)),
    );
    expect(client.present(roomId)).toEqual([erin.username]);

    const first = await post("one");
    const received = async (id: number) => {
      // The frame may come before the POST's answer does.
      if (!messages.includes(id))
        await waitFor<void>((done) => client.on("event", () => messages.includes(id) && done()));
    };
    await received(first);

    // The network drops the connection; messages keep coming meanwhile.
    opened[0]!.terminate();
    await waitFor<void>((done) => client.on("state", (s) => s === "reconnecting" && done()));
    const missed = [await post("two"), await post("three")];
    if (client.state !== "open")
      await waitFor<void>((done) => client.on("state", (s) => s === "open" && done()));
    const live = await post("four");
    await received(live);

    expect(messages).toEqual([first, ...missed, live]);
    expect(states).toEqual(["open", "reconnecting", "open"]);
    expect(opened).toHaveLength(2);
    expect(client.user).toEqual({ userId: erin.id, username: erin.username });
  });

  it("stops for good on a bad token, reporting unauthorized", async () => {
    const client = createStreamClient({
      baseUrl: origin,
      token: "not-a-token",
      WebSocket: WebSocket as unknown as WebSocketConstructor,
    });
    clients.push(client);
    const error = await waitFor<{ code: string }>((done) => client.on("error", done));
    expect(error).toEqual({ code: "unauthorized" });
    expect(client.state).toBe("closed");
  });

  it("refuses to start without a WebSocket implementation (as in Node 20)", () => {
    const global = globalThis as { WebSocket?: unknown };
    const saved = global.WebSocket;
    global.WebSocket = undefined;
    try {
      expect(() => createStreamClient({ baseUrl: origin, token: erin.token })).toThrow(
        /WebSocket option/,
      );
    } finally {
      global.WebSocket = saved;
    }
  });
});

describeEachDialect("@parley/client stream client: typing and read on $name", (dialect) => {
  let t: TestApp;
  let origin: string;
  let fay: TestUser;
  let gus: TestUser;
  let roomId: number;
  const clients: StreamClient[] = [];

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    fay = await t.user("user", `fay-${dialect.name}`);
    gus = await t.user("user", `gus-${dialect.name}`);
    const room = await t.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: fay.headers,
      payload: { name: "typing" },
    });
    roomId = room.json().id;
    await t.app.inject({ method: "POST", url: `/api/rooms/${roomId}/join`, headers: gus.headers });
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await t?.close();
  });

  const connect = async (user: TestUser) => {
    const client = createStreamClient({
      baseUrl: origin,
      token: user.token,
      WebSocket: WebSocket as unknown as WebSocketConstructor,
    });
    clients.push(client);
    client.subscribe(roomId);
    await waitFor<number>((done) =>
      client.on("presence", (room, present) => present.includes(user.username) && done(room)),
    );
    return client;
  };

  it("sends typing and hears another member's, and follows the user's read marker", async () => {
    const typist = await connect(fay);
    const listener = await connect(gus);
    const heard = waitFor<{ roomId: number; username: string }>((done) =>
      listener.on("typing", done),
    );
    typist.typing(roomId);
    expect(await heard).toEqual({ roomId, username: fay.username });

    const posted = await t.app.inject({
      method: "POST",
      url: `/api/rooms/${roomId}/messages`,
      headers: fay.headers,
      payload: { content: "read me" },
    });
    const moved = waitFor<{ roomId: number; messageId: number }>((done) =>
      listener.on("read", done),
    );
    await t.app.inject({
      method: "PUT",
      url: `/api/rooms/${roomId}/read`,
      headers: gus.headers,
      payload: { messageId: posted.json().id },
    });
    expect(await moved).toEqual({ roomId, messageId: posted.json().id });
  });
});
