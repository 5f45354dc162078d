/**
 * PARLEY_ICE_SERVERS reaches call participants: `GET /api/rooms/{roomId}/call` serves the
 * configured RTCIceServer objects as `iceServers`, whole when the operator opted in to static TURN
 * credentials (username and credential included, which the response schema must not strip),
 * before and during a call, and to members only. (Per-user credentials: security/turn-credentials.)
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";

const ICE_SERVERS = [
  { urls: "stun:stun.example.org:3478" },
  {
    urls: ["turn:turn.example.org:3478?transport=udp", "turns:turn.example.org:5349"],
    username: "parley",
    credential: "s3cret-turn-credential",
  },
];

describeEachDialect("ICE servers for calls on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let outsider: TestUser;
  let roomId: number;

  beforeAll(async () => {
    t = await createTestApp(dialect, {
      iceServers: JSON.stringify(ICE_SERVERS),
      iceServersStaticCredentials: true,
    });
    alice = await t.user("user", `alice-${dialect.name}`);
    outsider = await t.user("user", `outsider-${dialect.name}`);
    const room = await t.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: alice.headers,
      payload: { name: "call" },
    });
    roomId = room.json().id;
  });
  afterAll(async () => {
    await t?.close();
  });

  const callState = (user: TestUser) =>
    t.app.inject({ method: "GET", url: `/api/rooms/${roomId}/call`, headers: user.headers });

  it("serves the configured ICE servers whole when static credentials are opted in, before and during a call", async () => {
    const before = await callState(alice);
    expect(before.statusCode).toBe(200);
    expect(before.json()).toEqual({ callId: null, participants: [], iceServers: ICE_SERVERS });

    const joined = await t.app.inject({
      method: "POST",
      url: `/api/rooms/${roomId}/call/join`,
      headers: alice.headers,
    });
    expect(joined.statusCode).toBe(200);
    const during = await callState(alice);
    expect(during.json()).toEqual({
      callId: joined.json().callId,
      participants: [alice.username],
      iceServers: ICE_SERVERS,
    });
  });

  it("does not show the ICE servers (and their TURN credential) to a non-member", async () => {
    const res = await callState(outsider);
    expect(res.statusCode).toBe(403);
    expect(res.body).not.toContain("s3cret-turn-credential");
  });
});
