/**
 * TURN credentials reach only the people who may relay through the TURN server, and only for a
 * while: `GET /api/rooms/{roomId}/call` hands each user a TURN REST API credential of their own
 * (PARLEY_TURN_SECRET, expiring after PARLEY_TURN_TTL), bots none, and never the static credential
 * of PARLEY_ICE_SERVERS unless the operator opted in (PARLEY_ICE_SERVERS_STATIC_CREDENTIALS).
 */
import crypto from "node:crypto";
import { afterEach, expect, it } from "vitest";
import type { ConfigOverrides } from "../../../src/config/load-config.js";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";

const STATIC_CREDENTIAL = "s3cret-static-turn-credential";
const ICE_SERVERS = [
  { urls: "stun:stun.example.org:3478" },
  {
    urls: ["turn:turn.example.org:3478?transport=udp", "turns:turn.example.org:5349"],
    username: "parley",
    credential: STATIC_CREDENTIAL,
  },
];
const TURN_SECRET = "a-turn-rest-api-secret-of-32-characters-at-least";
const STUN_ONLY = [{ urls: "stun:stun.example.org:3478" }];

describeEachDialect("TURN credentials for calls on $name", (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  /** An app with the settings, a room, and a user and a bot who are members of it. */
  async function setUp(overrides: ConfigOverrides) {
    const app = (t = await createTestApp(dialect, {
      iceServers: JSON.stringify(ICE_SERVERS),
      ...overrides,
    }));
    const alice = await app.user("user", `alice-${dialect.name}`);
    const bot = await app.user("bot", `robot-${dialect.name}`);
    const room = await app.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: alice.headers,
      payload: { name: "call" },
    });
    const roomId: number = room.json().id;
    const join = await app.app.inject({
      method: "POST",
      url: `/api/rooms/${roomId}/join`,
      headers: bot.headers,
    });
    expect(join.statusCode).toBe(200);
    const callState = async (user: TestUser) => {
      const res = await app.app.inject({
        url: `/api/rooms/${roomId}/call`,
        headers: user.headers,
      });
      expect(res.statusCode).toBe(200);
      return res;
    };
    return { alice, bot, roomId, callState };
  }

  it("hands out no static TURN credential unless the operator opts in", async () => {
    const { alice, bot, callState } = await setUp({});
    for (const who of [alice, bot]) {
      const res = await callState(who);
      expect(res.body).not.toContain(STATIC_CREDENTIAL);
      expect(res.json().iceServers).toEqual(STUN_ONLY);
    }
  });

  it("gives each user a credential of their own that the TURN server checks and that expires after the TTL", async () => {
    const { alice, callState } = await setUp({ turnSecret: TURN_SECRET, turnTtl: "30m" });
    const before = Math.floor(Date.now() / 1000);
    const { iceServers } = (await callState(alice)).json();
    const after = Math.floor(Date.now() / 1000);

    expect(iceServers).toHaveLength(2);
    expect(iceServers[0]).toEqual(STUN_ONLY[0]);
    const turn = iceServers[1];
    expect(turn.urls).toEqual(ICE_SERVERS[1]!.urls);
    const [expiry, userId] = turn.username.split(":");
    expect(Number(userId)).toBe(alice.id);
    expect(Number(expiry)).toBeGreaterThanOrEqual(before + 1800);
    expect(Number(expiry)).toBeLessThanOrEqual(after + 1800);
    // What coturn's use-auth-secret computes from the username it receives.
    const expected = crypto.createHmac("sha1", TURN_SECRET).update(turn.username).digest("base64");
    expect(turn.credential).toBe(expected);
    expect(JSON.stringify(iceServers)).not.toContain(STATIC_CREDENTIAL);
  });

  it("gives a bot no TURN entry at all, only STUN", async () => {
    const { bot, callState } = await setUp({ turnSecret: TURN_SECRET });
    const res = await callState(bot);
    expect(res.json().iceServers).toEqual(STUN_ONLY);
  });

  it("serves PARLEY_TURN_URLS with the per-user credential, and the static credential only to users when opted in", async () => {
    const { alice, bot, callState } = await setUp({
      turnSecret: TURN_SECRET,
      turnUrls: "turns:relay.example.org:443?transport=tcp",
      iceServersStaticCredentials: true,
    });
    const forAlice = (await callState(alice)).json().iceServers;
    expect(forAlice.slice(0, 2)).toEqual(ICE_SERVERS);
    expect(forAlice[2]).toMatchObject({
      urls: ["turns:relay.example.org:443?transport=tcp"],
      username: expect.stringMatching(new RegExp(`^\\d+:${alice.id}$`)),
    });
    const forBot = await callState(bot);
    expect(forBot.body).not.toContain(STATIC_CREDENTIAL);
    expect(forBot.json().iceServers).toEqual(STUN_ONLY);
  });

  it("stops handing a credential to a user once they are disabled", async () => {
    const { alice, roomId, callState } = await setUp({ turnSecret: TURN_SECRET });
    await callState(alice);
    const disable = await t!.app.inject({
      method: "POST",
      url: `/api/admin/users/${alice.id}/disable`,
      headers: t!.admin.headers,
    });
    expect(disable.statusCode).toBe(200);
    const res = await t!.app.inject({
      url: `/api/rooms/${roomId}/call`,
      headers: alice.headers,
    });
    expect(res.statusCode).toBe(401);
    expect(res.body).not.toContain("credential");
  });
});
