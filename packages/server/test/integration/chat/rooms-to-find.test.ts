import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { recordEvents } from "./chat-helpers.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

describeEachDialect("people and rooms to find on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let dave: TestUser;

  async function call(user: TestUser, method: string, url: string, payload?: object) {
    const res = await t.app.inject({
      method: method as "GET",
      url,
      headers: user.headers,
      ...(payload ? { payload } : {}),
    });
    return { status: res.statusCode, body: (res.body ? res.json() : undefined) as Json };
  }

  const createRoom = async (user: TestUser, payload: object) => {
    const res = await call(user, "POST", "/api/rooms", payload);
    if (res.status !== 201) throw new Error(`create answered ${res.status}`);
    return res.body as Json;
  };

  beforeAll(async () => {
    t = await createTestApp(dialect);
    alice = await t.user("user", "alice");
    bob = await t.user("user", "bob");
    carol = await t.user("user", "carol");
    dave = await t.user("user", "dave");
    await t.ctx.db
      .updateTable("users")
      .set({ display_name: "Alice Liddell" })
      .where("id", "=", alice.id)
      .execute();
  });
  afterAll(async () => {
    await t.close();
  });

  describe("GET /api/users?query=", () => {
    it("finds active users by a prefix of the username or of the display name, for any user", async () => {
      const byUsername = await call(bob, "GET", "/api/users?query=ali");
      expect(byUsername.status).toBe(200);
      expect(byUsername.body.items).toEqual([
        { id: alice.id, username: "alice", displayName: "Alice Liddell", avatarUrl: null },
      ]);
      const byDisplayName = await call(bob, "GET", "/api/users?query=LIDD");
      expect(byDisplayName.body.items).toEqual([]);
      const byDisplayStart = await call(bob, "GET", "/api/users?query=alice%20l");
      expect(byDisplayStart.body.items.map((u: Json) => u.username)).toEqual(["alice"]);
      // Not a substring match.
      expect((await call(bob, "GET", "/api/users?query=lice")).body.items).toEqual([]);
    });

    it("leaves disabled users out and answers at most 20", async () => {
      const many: TestUser[] = [];
      for (let i = 0; i < 22; i++)
        many.push(await t.user("user", `zed${String(i).padStart(2, "0")}`));
      const disabled = await t.user("user", "zzdisabled");
      await call(t.admin, "POST", `/api/admin/users/${disabled.id}/disable`);
      const res = await call(carol, "GET", "/api/users?query=z");
      expect(res.body.items).toHaveLength(20);
      expect(res.body.items[0].username).toBe("zed00");
      expect((await call(carol, "GET", "/api/users?query=zzdis")).body.items).toEqual([]);
      expect((await call(carol, "GET", "/api/users?limit=21")).status).toBe(400);
    });

    it("treats % and _ in the query as themselves, not as wildcards", async () => {
      expect((await call(bob, "GET", "/api/users?query=%25")).body.items).toEqual([]);
      expect((await call(bob, "GET", "/api/users?query=_")).body.items).toEqual([]);
    });

    it("keeps the admin listing of accounts (roles, status) for admins only", async () => {
      expect((await call(bob, "GET", "/api/admin/users")).status).toBe(403);
      const admin = await call(t.admin, "GET", "/api/admin/users?limit=200");
      expect(admin.status).toBe(200);
      expect(admin.body.items.find((u: Json) => u.username === "zzdisabled")).toMatchObject({
        status: "disabled",
        role: "user",
      });
    });

    it("answers 401 without a token", async () => {
      const res = await t.app.inject({ method: "GET", url: "/api/users?query=a" });
      expect(res.statusCode).toBe(401);
    });
  });

  describe("public and private rooms", () => {
    it("creates a public room by default and a private one on request, with a topic", async () => {
      const open = await createRoom(alice, { name: "lobby", topic: "  say hi  " });
      expect(open).toMatchObject({ visibility: "public", topic: "say hi", peer: null });
      const closed = await createRoom(alice, { name: "secret plans", visibility: "private" });
      expect(closed).toMatchObject({ visibility: "private", topic: null });
      const bad = await call(alice, "POST", "/api/rooms", { name: "x", visibility: "hidden" });
      expect(bad.status).toBe(400);
      const long = await call(alice, "POST", "/api/rooms", { name: "x", topic: "t".repeat(501) });
      expect(long.status).toBe(400);
      expect(long.body.code).toBe("invalid_topic");
    });

    it("lists public rooms to browse, with member counts and whether the caller joined, never private ones", async () => {
      const open = await createRoom(alice, { name: "browse-me" });
      const closed = await createRoom(alice, { name: "browse-me-not", visibility: "private" });
      const res = await call(bob, "GET", "/api/rooms?scope=public&query=browse&limit=200");
      expect(res.status).toBe(200);
      expect(res.body.items).toEqual([
        expect.objectContaining({ id: open.id, memberCount: 1, joined: false }),
      ]);
      expect(res.body.items.some((r: Json) => r.id === closed.id)).toBe(false);
      const mine = await call(alice, "GET", "/api/rooms?scope=public&query=browse");
      expect(mine.body.items).toEqual([expect.objectContaining({ id: open.id, joined: true })]);
    });

    it("lets anyone join a public room, and answers a non-member of a private room 404 everywhere", async () => {
      const open = await createRoom(alice, { name: "open door" });
      expect((await call(bob, "POST", `/api/rooms/${open.id}/join`)).status).toBe(200);
      const closed = await createRoom(alice, { name: "closed door", visibility: "private" });
      const missing = await call(bob, "GET", "/api/rooms/999999");
      for (const [method, url, payload] of [
        ["POST", `/api/rooms/${closed.id}/join`],
        ["GET", `/api/rooms/${closed.id}`],
        ["GET", `/api/rooms/${closed.id}/messages`],
        ["POST", `/api/rooms/${closed.id}/members`, { userId: bob.id }],
        ["PUT", `/api/rooms/${closed.id}/read`, { messageId: 1 }],
        ["POST", `/api/rooms/${closed.id}/messages`, { content: "hello?" }],
        ["POST", `/api/rooms/${closed.id}/messages`, { content: "hello @alice" }],
        ["PATCH", `/api/rooms/${closed.id}/messages/1`, { content: "edited" }],
      ] as Array<[string, string, object?]>) {
        const res = await call(bob, method, url, payload);
        expect([url, res.status, res.body.code]).toEqual([url, 404, missing.body.code]);
      }
      // A public room's non-member is still told 403, as before.
      const pub = await createRoom(alice, { name: "public, not joined" });
      expect((await call(carol, "GET", `/api/rooms/${pub.id}/messages`)).status).toBe(403);
      const posted = await call(carol, "POST", `/api/rooms/${pub.id}/messages`, { content: "hi" });
      expect([posted.status, posted.body.code]).toEqual([403, "not_a_member"]);
    });

    it("lets a member add someone to a private room, firing USER_JOINED_ROOM via membership", async () => {
      const closed = await createRoom(alice, { name: "inner circle", visibility: "private" });
      const seen = recordEvents(t);
      const added = await call(alice, "POST", `/api/rooms/${closed.id}/members`, {
        userId: bob.id,
      });
      seen.stop();
      expect(added.status).toBe(200);
      expect(added.body).toMatchObject({ id: closed.id, memberCount: 2 });
      expect(seen.events).toEqual([
        ["USER_JOINED_ROOM", { roomId: closed.id, username: "bob", via: "membership" }],
      ]);
      // Now bob is a member: he sees it and adds carol in turn.
      expect((await call(bob, "GET", `/api/rooms/${closed.id}`)).status).toBe(200);
      expect(
        (await call(bob, "POST", `/api/rooms/${closed.id}/members`, { userId: carol.id })).status,
      ).toBe(200);
      const again = await call(alice, "POST", `/api/rooms/${closed.id}/members`, {
        userId: bob.id,
      });
      expect([again.status, again.body.code]).toEqual([409, "already_member"]);
      const nobody = await call(alice, "POST", `/api/rooms/${closed.id}/members`, {
        userId: 999999,
      });
      expect(nobody.status).toBe(404);
      // A user's own join of a private room stays refused even once they know the id.
      expect((await call(dave, "POST", `/api/rooms/${closed.id}/join`)).status).toBe(404);
    });

    it("does not add a disabled user, nor a third person to a direct message", async () => {
      const room = await createRoom(alice, { name: "adds" });
      const gone = await t.user("user", "gone-user");
      await call(t.admin, "POST", `/api/admin/users/${gone.id}/disable`);
      const disabled = await call(alice, "POST", `/api/rooms/${room.id}/members`, {
        userId: gone.id,
      });
      expect(disabled.status).toBe(404);
      const dm = await call(alice, "POST", "/api/dms", { userId: dave.id });
      const third = await call(alice, "POST", `/api/rooms/${dm.body.id}/members`, {
        userId: carol.id,
      });
      expect([third.status, third.body.code]).toEqual([409, "dm_members_fixed"]);
    });

    it("lists the joined rooms that start with the query, and DMs by the peer's name", async () => {
      const room = await createRoom(carol, { name: "Quartz" });
      const dm = await call(carol, "POST", "/api/dms", { username: "dave" });
      const byName = await call(carol, "GET", "/api/rooms?query=quar");
      expect(byName.body.items.map((r: Json) => r.id)).toEqual([room.id]);
      const byPeer = await call(carol, "GET", "/api/rooms?scope=joined&query=dav");
      expect(byPeer.body.items.map((r: Json) => r.id)).toEqual([dm.body.id]);
    });
  });

  describe("direct messages by username, shown by the other person's name", () => {
    it("opens a DM by username or by id (the same one), each side seeing the other as peer", async () => {
      const byName = await call(bob, "POST", "/api/dms", { username: "carol" });
      expect(byName.status).toBe(201);
      expect(byName.body).toMatchObject({
        kind: "dm",
        name: null,
        visibility: "private",
        peer: { id: carol.id, username: "carol", displayName: "carol" },
      });
      const byId = await call(carol, "POST", "/api/dms", { userId: bob.id });
      expect(byId.status).toBe(200);
      expect(byId.body).toMatchObject({
        id: byName.body.id,
        peer: { id: bob.id, username: "bob", displayName: "bob" },
      });
      const listed = await call(carol, "GET", "/api/rooms?limit=200");
      expect(listed.body.items.find((r: Json) => r.id === byName.body.id).peer.username).toBe(
        "bob",
      );
    });

    it("refuses neither or both of userId and username, an unknown or disabled username, and oneself", async () => {
      expect((await call(bob, "POST", "/api/dms", {})).status).toBe(400);
      const empty = await t.app.inject({ method: "POST", url: "/api/dms", headers: bob.headers });
      expect(empty.statusCode).toBe(400);
      expect(
        (await call(bob, "POST", "/api/dms", { userId: carol.id, username: "carol" })).status,
      ).toBe(400);
      expect((await call(bob, "POST", "/api/dms", { username: "nobody-here" })).status).toBe(404);
      expect((await call(bob, "POST", "/api/dms", { username: "zzdisabled" })).status).toBe(404);
      const self = await call(bob, "POST", "/api/dms", { username: "bob" });
      expect([self.status, self.body.code]).toEqual([400, "cannot_dm_self"]);
    });

    it("makes a promoted DM a public room like any other, which others may find and join", async () => {
      const dm = await call(alice, "POST", "/api/dms", { username: "dave" });
      const promoted = await call(alice, "POST", `/api/dms/${dm.body.id}/promote`, {
        name: "alice and dave",
      });
      expect(promoted.body).toMatchObject({ kind: "room", visibility: "public", peer: null });
      const browse = await call(bob, "GET", "/api/rooms?scope=public&query=alice%20and");
      expect(browse.body.items.map((r: Json) => r.id)).toEqual([dm.body.id]);
      expect((await call(bob, "POST", `/api/rooms/${dm.body.id}/join`)).status).toBe(200);
    });
  });
});
