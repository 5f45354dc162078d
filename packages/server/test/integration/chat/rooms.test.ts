import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { EVENT_NAMES } from "../../../src/events/event-catalogue.js";
import { createRoom, insertEndpoint } from "../../helpers/fixtures.js";
import { countRows, failFanOutAfterWriting, joinRoom, recordEvents } from "./chat-helpers.js";

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describeEachDialect("rooms and direct messages on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    alice = await t.user("user", "alice");
    bob = await t.user("user", "bob");
    carol = await t.user("user", "carol");
  });
  afterAll(async () => {
    await t.close();
  });

  describe("POST /api/rooms", () => {
    it("creates a room with the creator as its only member and fires ROOM_CREATED once", async () => {
      const seen = recordEvents(t);
      const res = await t.app.inject({
        method: "POST",
        url: "/api/rooms",
        headers: alice.headers,
        payload: { name: "  general  " },
      });
      seen.stop();
      expect(res.statusCode).toBe(201);
      const room = res.json();
      expect(room).toEqual({
        id: expect.any(Number),
        name: "general",
        kind: "room",
        createdBy: "alice",
        createdAt: expect.stringMatching(ISO),
        memberCount: 1,
        visibility: "public",
        topic: null,
        peer: null,
        lastReadMessageId: 0,
        unreadCount: 0,
        mentionCount: 0,
      });
      expect(seen.events).toEqual([["ROOM_CREATED", { roomId: room.id, createdBy: "alice" }]]);
    });

    it("accepts 200 characters counted as code points and refuses 201 or a blank name with invalid_name", async () => {
      const ok = await t.app.inject({
        method: "POST",
        url: "/api/rooms",
        headers: alice.headers,
        payload: { name: "🦜".repeat(200) },
      });
      expect(ok.statusCode).toBe(201);
      for (const name of ["🦜".repeat(201), "   ", ""]) {
        const res = await t.app.inject({
          method: "POST",
          url: "/api/rooms",
          headers: alice.headers,
          payload: { name },
        });
        expect(res.statusCode).toBe(400);
        expect(res.json().code).toBe("invalid_name");
      }
    });

    it("answers 400 for a missing name, a non-string name or an unknown field", async () => {
      const missing = await t.app.inject({
        method: "POST",
        url: "/api/rooms",
        headers: alice.headers,
        payload: {},
      });
      expect(missing.statusCode).toBe(400);
      expect(missing.json()).toMatchObject({ code: "validation_failed", field: "body.name" });
      const unknown = await t.app.inject({
        method: "POST",
        url: "/api/rooms",
        headers: alice.headers,
        payload: { name: "x", purpose: "y" },
      });
      expect(unknown.json()).toMatchObject({ code: "unknown_field", field: "body.purpose" });
      const wrongType = await t.app.inject({
        method: "POST",
        url: "/api/rooms",
        headers: alice.headers,
        payload: { name: { a: 1 } },
      });
      expect(wrongType.statusCode).toBe(400);
    });

    it("answers 401 with WWW-Authenticate without a token", async () => {
      const res = await t.app.inject({ method: "POST", url: "/api/rooms", payload: { name: "x" } });
      expect(res.statusCode).toBe(401);
      expect(res.headers["www-authenticate"]).toMatch(/^Bearer/);
      expect(res.json().code).toBe("unauthorized");
    });

    it("rolls back the room when its event cannot be queued, leaving no delivery behind", async () => {
      await insertEndpoint(t, { events: EVENT_NAMES });
      const rooms = await countRows(t, "rooms");
      const deliveries = await countRows(t, "webhook_deliveries");
      const restore = failFanOutAfterWriting(t);
      const seen = recordEvents(t);
      const res = await t.app.inject({
        method: "POST",
        url: "/api/rooms",
        headers: alice.headers,
        payload: { name: "doomed" },
      });
      seen.stop();
      restore();
      expect(res.statusCode).toBe(500);
      expect(res.json().code).toBe("internal_error");
      expect(await countRows(t, "rooms")).toBe(rooms);
      expect(await countRows(t, "webhook_deliveries")).toBe(deliveries);
      expect(seen.events).toEqual([]);
      // With the spine healthy again the same request commits the room and one delivery.
      const ok = await t.app.inject({
        method: "POST",
        url: "/api/rooms",
        headers: alice.headers,
        payload: { name: "doomed" },
      });
      expect(ok.statusCode).toBe(201);
      expect(await countRows(t, "webhook_deliveries")).toBe(deliveries + 1);
    });
  });

  describe("GET /api/rooms and /api/rooms/{roomId}", () => {
    it("lists only the caller's rooms, in pages", async () => {
      const user = await t.user();
      const mine = [];
      for (const name of ["one", "two", "three"]) mine.push((await createRoom(t, user, name)).id);
      await createRoom(t, bob, "not-mine");
      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const res = await t.app.inject({
          method: "GET",
          url: `/api/rooms?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
          headers: user.headers,
        });
        expect(res.statusCode).toBe(200);
        const page = res.json() as {
          items: Array<{ id: number; memberCount: number }>;
          nextCursor: string | null;
        };
        expect(page.items.length).toBeLessThanOrEqual(2);
        seen.push(...page.items.map((room) => room.id));
        cursor = page.nextCursor;
      } while (cursor);
      expect(seen).toEqual(mine);
      const bad = await t.app.inject({
        method: "GET",
        url: "/api/rooms?cursor=nope",
        headers: user.headers,
      });
      expect(bad.json().code).toBe("invalid_cursor");
      const unauthenticated = await t.app.inject({ method: "GET", url: "/api/rooms" });
      expect(unauthenticated.statusCode).toBe(401);
    });

    it("shows a room to members and admins, 403 not_a_member to others, 404 when unknown, 400 for a non-integer id", async () => {
      const room = await createRoom(t, alice, "visible");
      const member = await t.app.inject({
        method: "GET",
        url: `/api/rooms/${room.id}`,
        headers: alice.headers,
      });
      expect(member.statusCode).toBe(200);
      expect(member.json()).toMatchObject({
        id: room.id,
        name: "visible",
        kind: "room",
        createdBy: "alice",
        memberCount: 1,
      });
      const admin = await t.app.inject({
        method: "GET",
        url: `/api/rooms/${room.id}`,
        headers: t.admin.headers,
      });
      expect(admin.statusCode).toBe(200);
      const stranger = await t.app.inject({
        method: "GET",
        url: `/api/rooms/${room.id}`,
        headers: carol.headers,
      });
      expect(stranger.statusCode).toBe(403);
      expect(stranger.json().code).toBe("not_a_member");
      const unknown = await t.app.inject({
        method: "GET",
        url: "/api/rooms/999999",
        headers: alice.headers,
      });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json().code).toBe("not_found");
      const notAnInteger = await t.app.inject({
        method: "GET",
        url: "/api/rooms/abc",
        headers: alice.headers,
      });
      expect(notAnInteger.statusCode).toBe(400);
      expect(notAnInteger.json().code).toBe("validation_failed");
    });
  });

  describe("join and leave", () => {
    it("joins once (USER_JOINED_ROOM), then answers 409 already_member", async () => {
      const room = await createRoom(t, alice, "joinable");
      const seen = recordEvents(t);
      const res = await t.app.inject({
        method: "POST",
        url: `/api/rooms/${room.id}/join`,
        headers: bob.headers,
      });
      const again = await t.app.inject({
        method: "POST",
        url: `/api/rooms/${room.id}/join`,
        headers: bob.headers,
      });
      seen.stop();
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ id: room.id, memberCount: 2 });
      expect(again.statusCode).toBe(409);
      expect(again.json().code).toBe("already_member");
      expect(seen.events).toEqual([
        ["USER_JOINED_ROOM", { roomId: room.id, username: "bob", via: "membership" }],
      ]);
    });

    it("answers 404 for an unknown room and 401 without a token", async () => {
      const unknown = await t.app.inject({
        method: "POST",
        url: "/api/rooms/999999/join",
        headers: bob.headers,
      });
      expect(unknown.statusCode).toBe(404);
      const anonymous = await t.app.inject({ method: "POST", url: "/api/rooms/1/join" });
      expect(anonymous.statusCode).toBe(401);
    });

    it("leaves (USER_LEFT_ROOM), then answers 403 not_a_member", async () => {
      const room = await createRoom(t, alice, "leavable");
      await joinRoom(t, bob, room.id);
      const seen = recordEvents(t);
      const res = await t.app.inject({
        method: "POST",
        url: `/api/rooms/${room.id}/leave`,
        headers: bob.headers,
      });
      const again = await t.app.inject({
        method: "POST",
        url: `/api/rooms/${room.id}/leave`,
        headers: bob.headers,
      });
      seen.stop();
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe("");
      expect(again.statusCode).toBe(403);
      expect(again.json().code).toBe("not_a_member");
      expect(seen.events).toEqual([
        ["USER_LEFT_ROOM", { roomId: room.id, username: "bob", via: "membership" }],
      ]);
    });

    it("rolls back a join whose event cannot be queued", async () => {
      const room = await createRoom(t, alice, "atomic-join");
      const restore = failFanOutAfterWriting(t);
      const res = await t.app.inject({
        method: "POST",
        url: `/api/rooms/${room.id}/join`,
        headers: carol.headers,
      });
      restore();
      expect(res.statusCode).toBe(500);
      const view = await t.app.inject({
        method: "GET",
        url: `/api/rooms/${room.id}`,
        headers: alice.headers,
      });
      expect(view.json().memberCount).toBe(1);
    });
  });

  describe("delete", () => {
    it("lets the creator delete the room (ROOM_DELETED), after which it is gone", async () => {
      const room = await createRoom(t, alice, "short-lived");
      await joinRoom(t, bob, room.id);
      const seen = recordEvents(t);
      const byMember = await t.app.inject({
        method: "DELETE",
        url: `/api/rooms/${room.id}`,
        headers: bob.headers,
      });
      const byCreator = await t.app.inject({
        method: "DELETE",
        url: `/api/rooms/${room.id}`,
        headers: alice.headers,
      });
      seen.stop();
      expect(byMember.statusCode).toBe(403);
      expect(byMember.json().code).toBe("not_room_creator");
      expect(byCreator.statusCode).toBe(204);
      expect(seen.events).toEqual([["ROOM_DELETED", { roomId: room.id, deletedBy: "alice" }]]);
      for (const request of [
        { method: "GET" as const, url: `/api/rooms/${room.id}` },
        { method: "DELETE" as const, url: `/api/rooms/${room.id}` },
        { method: "POST" as const, url: `/api/rooms/${room.id}/join` },
      ]) {
        const res = await t.app.inject({ ...request, headers: alice.headers });
        expect(res.statusCode).toBe(404);
      }
      const list = await t.app.inject({
        method: "GET",
        url: "/api/rooms?limit=200",
        headers: bob.headers,
      });
      expect(list.json().items.map((r: { id: number }) => r.id)).not.toContain(room.id);
    });

    it("lets an admin delete any room (ADMIN_ROOM_DELETED) and refuses other roles with 403", async () => {
      const room = await createRoom(t, alice, "moderated");
      const byUser = await t.app.inject({
        method: "DELETE",
        url: `/api/admin/rooms/${room.id}`,
        headers: alice.headers,
      });
      expect(byUser.statusCode).toBe(403);
      expect(byUser.json().code).toBe("forbidden");
      const seen = recordEvents(t);
      const res = await t.app.inject({
        method: "DELETE",
        url: `/api/admin/rooms/${room.id}`,
        headers: t.admin.headers,
      });
      const again = await t.app.inject({
        method: "DELETE",
        url: `/api/admin/rooms/${room.id}`,
        headers: t.admin.headers,
      });
      seen.stop();
      expect(res.statusCode).toBe(204);
      expect(again.statusCode).toBe(404);
      expect(seen.events).toEqual([
        ["ADMIN_ROOM_DELETED", { roomId: room.id, adminActor: "admin" }],
      ]);
      const anonymous = await t.app.inject({
        method: "DELETE",
        url: `/api/admin/rooms/${room.id}`,
      });
      expect(anonymous.statusCode).toBe(401);
    });
  });

  describe("direct messages", () => {
    it("opens a DM once (201), returns the same one to either member (200), and fires nothing", async () => {
      const dave = await t.user("user", "dave");
      const erin = await t.user("user", "erin");
      const seen = recordEvents(t);
      const first = await t.app.inject({
        method: "POST",
        url: "/api/dms",
        headers: dave.headers,
        payload: { userId: erin.id },
      });
      const again = await t.app.inject({
        method: "POST",
        url: "/api/dms",
        headers: dave.headers,
        payload: { userId: erin.id },
      });
      const reverse = await t.app.inject({
        method: "POST",
        url: "/api/dms",
        headers: erin.headers,
        payload: { userId: dave.id },
      });
      seen.stop();
      expect(first.statusCode).toBe(201);
      expect(first.json()).toMatchObject({
        name: null,
        kind: "dm",
        createdBy: "dave",
        memberCount: 2,
      });
      expect(again.statusCode).toBe(200);
      expect(reverse.statusCode).toBe(200);
      expect(again.json().id).toBe(first.json().id);
      expect(reverse.json().id).toBe(first.json().id);
      expect(seen.events).toEqual([]);
    });

    it("answers 400 cannot_dm_self, 404 for an unknown or disabled user, 400 for a bad body, 401 without a token", async () => {
      const self = await t.app.inject({
        method: "POST",
        url: "/api/dms",
        headers: alice.headers,
        payload: { userId: alice.id },
      });
      expect(self.statusCode).toBe(400);
      expect(self.json().code).toBe("cannot_dm_self");
      const unknown = await t.app.inject({
        method: "POST",
        url: "/api/dms",
        headers: alice.headers,
        payload: { userId: 999999 },
      });
      expect(unknown.statusCode).toBe(404);
      const disabled = await t.user();
      await t.app.inject({
        method: "POST",
        url: `/api/admin/users/${disabled.id}/disable`,
        headers: t.admin.headers,
      });
      const toDisabled = await t.app.inject({
        method: "POST",
        url: "/api/dms",
        headers: alice.headers,
        payload: { userId: disabled.id },
      });
      expect(toDisabled.statusCode).toBe(404);
      const bad = await t.app.inject({
        method: "POST",
        url: "/api/dms",
        headers: alice.headers,
        payload: { userId: "two" },
      });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().code).toBe("validation_failed");
      const anonymous = await t.app.inject({
        method: "POST",
        url: "/api/dms",
        payload: { userId: alice.id },
      });
      expect(anonymous.statusCode).toBe(401);
    });

    it("keeps strangers out of a DM (403) and members in (409)", async () => {
      const dm = (
        await t.app.inject({
          method: "POST",
          url: "/api/dms",
          headers: alice.headers,
          payload: { userId: bob.id },
        })
      ).json();
      const stranger = await t.app.inject({
        method: "POST",
        url: `/api/rooms/${dm.id}/join`,
        headers: carol.headers,
      });
      expect(stranger.statusCode).toBe(403);
      expect(stranger.json().code).toBe("not_a_member");
      const member = await t.app.inject({
        method: "POST",
        url: `/api/rooms/${dm.id}/join`,
        headers: bob.headers,
      });
      expect(member.statusCode).toBe(409);
      const view = await t.app.inject({
        method: "GET",
        url: `/api/rooms/${dm.id}`,
        headers: carol.headers,
      });
      expect(view.statusCode).toBe(403);
    });

    it("opens a new DM after a member left the old one", async () => {
      const frank = await t.user("user", "frank");
      const old = (
        await t.app.inject({
          method: "POST",
          url: "/api/dms",
          headers: frank.headers,
          payload: { userId: carol.id },
        })
      ).json();
      const left = await t.app.inject({
        method: "POST",
        url: `/api/rooms/${old.id}/leave`,
        headers: carol.headers,
      });
      expect(left.statusCode).toBe(204);
      const fresh = await t.app.inject({
        method: "POST",
        url: "/api/dms",
        headers: carol.headers,
        payload: { userId: frank.id },
      });
      expect(fresh.statusCode).toBe(201);
      expect(fresh.json().id).not.toBe(old.id);
    });

    it("promotes a DM to a named room with the same id (ROOM_CREATED with convertedFromDm), once", async () => {
      const gina = await t.user("user", "gina");
      const dm = (
        await t.app.inject({
          method: "POST",
          url: "/api/dms",
          headers: gina.headers,
          payload: { userId: bob.id },
        })
      ).json();
      const stranger = await t.app.inject({
        method: "POST",
        url: `/api/dms/${dm.id}/promote`,
        headers: carol.headers,
        payload: { name: "x" },
      });
      expect(stranger.statusCode).toBe(403);
      expect(stranger.json().code).toBe("not_a_member");
      const seen = recordEvents(t);
      const res = await t.app.inject({
        method: "POST",
        url: `/api/dms/${dm.id}/promote`,
        headers: bob.headers,
        payload: { name: "project" },
      });
      const again = await t.app.inject({
        method: "POST",
        url: `/api/dms/${dm.id}/promote`,
        headers: gina.headers,
        payload: { name: "again" },
      });
      seen.stop();
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        id: dm.id,
        name: "project",
        kind: "room",
        createdBy: "bob",
        memberCount: 2,
      });
      expect(again.statusCode).toBe(409);
      expect(again.json().code).toBe("already_promoted");
      expect(seen.events).toEqual([
        ["ROOM_CREATED", { roomId: dm.id, createdBy: "bob", convertedFromDm: true }],
      ]);
      // The pair has no open DM any more: asking for one opens a new conversation.
      const next = await t.app.inject({
        method: "POST",
        url: "/api/dms",
        headers: gina.headers,
        payload: { userId: bob.id },
      });
      expect(next.statusCode).toBe(201);
      expect(next.json().id).not.toBe(dm.id);
    });

    it("answers 404 for promoting an unknown DM, 400 for a bad name, 409 for a room, 401 without a token", async () => {
      const unknown = await t.app.inject({
        method: "POST",
        url: "/api/dms/999999/promote",
        headers: alice.headers,
        payload: { name: "x" },
      });
      expect(unknown.statusCode).toBe(404);
      const dm = (
        await t.app.inject({
          method: "POST",
          url: "/api/dms",
          headers: alice.headers,
          payload: { userId: carol.id },
        })
      ).json();
      const blank = await t.app.inject({
        method: "POST",
        url: `/api/dms/${dm.id}/promote`,
        headers: alice.headers,
        payload: { name: " " },
      });
      expect(blank.json().code).toBe("invalid_name");
      const room = await createRoom(t, alice, "already-a-room");
      const promoted = await t.app.inject({
        method: "POST",
        url: `/api/dms/${room.id}/promote`,
        headers: alice.headers,
        payload: { name: "x" },
      });
      expect(promoted.statusCode).toBe(409);
      expect(promoted.json().code).toBe("already_promoted");
      const anonymous = await t.app.inject({
        method: "POST",
        url: `/api/dms/${dm.id}/promote`,
        payload: { name: "x" },
      });
      expect(anonymous.statusCode).toBe(401);
    });
  });
});
