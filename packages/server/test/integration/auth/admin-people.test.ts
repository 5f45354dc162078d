/**
 * The admin API behind the people, tokens and rooms pages: role changes, enabling, sign-in resets
 * through the invitation machinery, the list of tokens that work, and every room for an admin.
 */
import { RequestError } from "@parley/client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { apiFor, createRoom } from "../../helpers/fixtures.js";
import { login, PASSWORD, userWithPassword } from "./sign-in-helpers.js";

/** The status (and code) a call was refused with. */
async function refusal(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    if (error instanceof RequestError) return `${error.status} ${error.code ?? ""}`.trim();
    throw error;
  }
  return "accepted";
}

describeEachDialect("admin pages' API (people, tokens, rooms) on $name", (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect, { publicBaseUrl: "https://chat.example.com" });
  });
  afterAll(async () => {
    await t.close();
  });

  const admin = () => apiFor(t);
  const me = (headers: Record<string, string>) =>
    t.app.inject({ method: "GET", url: "/api/me", headers });

  it("changes a role at once: the old role's tokens stop, sessions take the new role", async () => {
    const ada = await userWithPassword(t);
    const cookie = `parley_session=${(await login(t, ada.username, PASSWORD)).json().token}`;
    const { data } = await admin()("PATCH /api/admin/users/{id}", { id: ada.id, role: "admin" });
    expect(data).toMatchObject({ id: ada.id, role: "admin" });
    expect((await me(ada.headers)).statusCode).toBe(401);
    const session = await me({ cookie });
    expect(session.json()).toMatchObject({ role: "admin" });
    const renamed = await admin()("PATCH /api/admin/users/{id}", {
      id: ada.id,
      displayName: "Ada L.",
    });
    expect(renamed.data).toMatchObject({ displayName: "Ada L.", role: "admin" });
    expect(
      await refusal(admin()("PATCH /api/admin/users/{id}", { id: 999_999, role: "user" })),
    ).toBe("404 not_found");
  });

  it("never takes the role of the last enabled admin, and only an admin changes roles", async () => {
    const other = await t.user("user");
    expect(
      await refusal(
        apiFor(t, other)("PATCH /api/admin/users/{id}", { id: other.id, role: "admin" }),
      ),
    ).toBe("403 forbidden");
    // Disable every other admin, so that t.admin is the last one.
    const { data: users } = await admin()("GET /api/admin/users", { limit: 200 });
    for (const user of users.items)
      if (user.role === "admin" && user.id !== t.admin.id && user.status === "active")
        await admin()("POST /api/admin/users/{id}/disable", { id: user.id });
    expect(
      await refusal(admin()("PATCH /api/admin/users/{id}", { id: t.admin.id, role: "user" })),
    ).toBe("409 last_admin");
  });

  it("enables a disabled user again", async () => {
    const bob = await t.user("user");
    await admin()("POST /api/admin/users/{id}/disable", { id: bob.id });
    expect((await me(bob.headers)).statusCode).toBe(401);
    const { data } = await admin()("POST /api/admin/users/{id}/enable", { id: bob.id });
    expect(data.status).toBe("active");
    expect((await me(bob.headers)).statusCode).toBe(200);
  });

  it("resets a sign-in: sessions end, the password goes, the link sets a new one once", async () => {
    const carol = await userWithPassword(t);
    const cookie = `parley_session=${(await login(t, carol.username, PASSWORD)).json().token}`;
    const { data: reset } = await admin()("POST /api/admin/users/{id}/reset-sign-in", {
      id: carol.id,
    });
    expect(reset.url).toMatch(/^https:\/\/chat\.example\.com\/app\/#reset=[A-Za-z0-9_-]{43}$/);
    expect((Date.parse(reset.expiresAt) - Date.now()) / 86_400_000).toBeGreaterThan(6.99);
    expect((await me({ cookie })).statusCode).toBe(401);
    expect((await login(t, carol.username, PASSWORD)).statusCode).toBe(401);
    // Tokens are left alone: scripts keep running.
    expect((await me(carol.headers)).statusCode).toBe(200);

    const token = new URL(reset.url).hash.replace(/^#reset=/, "");
    // A reset link is not an invitation, and an invitation does not reset anyone.
    const asInvite = await t.app.inject({
      method: "POST",
      url: "/api/auth/accept-invite",
      payload: { token, username: "someone-new", password: PASSWORD },
    });
    expect(asInvite.json().code).toBe("invalid_invite");
    const { data: invite } = await admin()("POST /api/admin/invites", { role: "user" });
    const inviteToken = new URL(invite.url).hash.replace(/^#invite=/, "");
    const inviteAsReset = await t.app.inject({
      method: "POST",
      url: "/api/auth/reset-password",
      payload: { token: inviteToken, password: PASSWORD },
    });
    expect(inviteAsReset.json().code).toBe("invalid_invite");

    const set = await t.app.inject({
      method: "POST",
      url: "/api/auth/reset-password",
      payload: { token, password: "a brand new passphrase" },
    });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().user).toMatchObject({ id: carol.id, username: carol.username });
    expect((await login(t, carol.username, "a brand new passphrase")).statusCode).toBe(200);
    const again = await t.app.inject({
      method: "POST",
      url: "/api/auth/reset-password",
      payload: { token, password: "another passphrase!" },
    });
    expect(again.json().code).toBe("invalid_invite");
  });

  it("closes a user's earlier reset link when a new one is made", async () => {
    const dan = await t.user("user");
    const first = await admin()("POST /api/admin/users/{id}/reset-sign-in", { id: dan.id });
    await admin()("POST /api/admin/users/{id}/reset-sign-in", { id: dan.id });
    const res = await t.app.inject({
      method: "POST",
      url: "/api/auth/reset-password",
      payload: { token: new URL(first.data.url).hash.slice(7), password: PASSWORD },
    });
    expect(res.json().code).toBe("invalid_invite");
  });

  it("lists the tokens that work, by id prefix or user, and never the token", async () => {
    const erin = await t.user("bot");
    const { data: issued } = await admin()("POST /api/admin/users/{id}/tokens", { id: erin.id });
    const { data: mine } = await admin()("GET /api/admin/tokens", { userId: erin.id });
    expect(mine.items.map((item) => item.tokenId).sort()).toEqual(
      [
        issued.tokenId,
        ...mine.items.map((i) => i.tokenId).filter((id) => id !== issued.tokenId),
      ].sort(),
    );
    expect(mine.items).toHaveLength(2); // the test user's own token and the new one
    const entry = mine.items.find((item) => item.tokenId === issued.tokenId)!;
    expect(entry).toMatchObject({ userId: erin.id, username: erin.username, role: "bot" });
    expect(entry.expiresAt).toBe(issued.expiresAt);
    expect(JSON.stringify(mine)).not.toContain(issued.token);

    // By prefix: case-sensitive, "_" and "-" literal.
    const prefix = issued.tokenId.slice(0, 6);
    const { data: found } = await admin()("GET /api/admin/tokens", { prefix });
    expect(found.items.map((item) => item.tokenId)).toContain(issued.tokenId);
    expect(found.items.every((item) => item.tokenId.startsWith(prefix))).toBe(true);
    const flipped = prefix.replace(/[a-z]/, (c) => c.toUpperCase());
    if (flipped !== prefix) {
      const { data: none } = await admin()("GET /api/admin/tokens", { prefix: flipped });
      expect(none.items.map((item) => item.tokenId)).not.toContain(issued.tokenId);
    }

    // Revoked one by one, or all of the user's: gone from the list.
    await admin()("DELETE /api/admin/tokens/{tokenId}", { tokenId: issued.tokenId });
    const after = await admin()("GET /api/admin/tokens", { userId: erin.id });
    expect(after.data.items.map((item) => item.tokenId)).not.toContain(issued.tokenId);
    expect(after.data.items).toHaveLength(1);
    await admin()("POST /api/admin/users/{id}/revoke-tokens", { id: erin.id });
    expect((await admin()("GET /api/admin/tokens", { userId: erin.id })).data.items).toEqual([]);
    // A role change ends the old role's tokens: they leave the list too.
    const frank = await t.user("user");
    await admin()("PATCH /api/admin/users/{id}", { id: frank.id, role: "bot" });
    expect((await admin()("GET /api/admin/tokens", { userId: frank.id })).data.items).toEqual([]);
  });

  it("forgets tokens that expired when the next one is issued", async () => {
    const old = await t.user("bot");
    await t.ctx.db
      .insertInto("issued_tokens")
      .values({
        token_id: "expired-token-id",
        user_id: old.id,
        role: "bot",
        issued_at: Date.now() - 2 * 86_400_000,
        expires_at: Date.now() - 86_400_000,
      })
      .execute();
    await admin()("POST /api/admin/users/{id}/tokens", { id: old.id });
    const left = await t.ctx.db
      .selectFrom("issued_tokens")
      .select("token_id")
      .where("token_id", "=", "expired-token-id")
      .execute();
    expect(left).toEqual([]);
  });

  it("pages through tokens in id order", async () => {
    const gus = await t.user("bot");
    for (let i = 0; i < 4; i++) await admin()("POST /api/admin/users/{id}/tokens", { id: gus.id });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const { data } = await admin()("GET /api/admin/tokens", {
        userId: gus.id,
        limit: 2,
        ...(cursor === undefined ? {} : { cursor }),
      });
      seen.push(...data.items.map((item) => item.tokenId));
      cursor = data.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(seen).toHaveLength(5);
    expect([...seen].sort()).toEqual(seen.slice().sort());
    expect(new Set(seen).size).toBe(5);
    expect(await refusal(admin()("GET /api/admin/tokens", { cursor: "bm9wZQ" }))).toBe(
      "400 invalid_cursor",
    );
  });

  it("lists every room for an admin, private ones and DMs included, by name prefix", async () => {
    const owner = await t.user("user");
    const { data: secret } = await apiFor(t, owner)("POST /api/rooms", {
      name: "zz-secret-plans",
      visibility: "private",
    });
    const open = await createRoom(t, owner, "zz-open-room");
    const peer = await t.user("user");
    const { data: dm } = await apiFor(t, owner)("POST /api/dms", { userId: peer.id });
    const { data: rooms } = await admin()("GET /api/admin/rooms", { query: "zz-", limit: 200 });
    expect(rooms.items.map((room) => room.name)).toEqual(["zz-secret-plans", "zz-open-room"]);
    expect(rooms.items[0]).toMatchObject({ id: secret.id, visibility: "private", memberCount: 1 });
    const { data: dms } = await admin()("GET /api/admin/rooms", { kind: "dm", limit: 200 });
    expect(dms.items.map((room) => room.id)).toContain(dm.id);
    expect(dms.items.every((room) => room.kind === "dm")).toBe(true);
    await admin()("DELETE /api/admin/rooms/{roomId}", { roomId: open.id });
    const { data: left } = await admin()("GET /api/admin/rooms", { query: "zz-" });
    expect(left.items.map((room) => room.id)).toEqual([secret.id]);
    expect(await refusal(apiFor(t, owner)("GET /api/admin/rooms", {}))).toBe("403 forbidden");
  });
});
