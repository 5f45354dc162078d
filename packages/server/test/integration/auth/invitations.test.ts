import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { login, PASSWORD, sessionCookie } from "./sign-in-helpers.js";

describeEachDialect("invitations on $name", (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect, { publicBaseUrl: "https://chat.example.com" });
  });
  afterAll(async () => {
    await t.close();
  });

  async function invite(body: Record<string, unknown> = { role: "user" }) {
    const res = await t.app.inject({
      method: "POST",
      url: "/api/admin/invites",
      headers: t.admin.headers,
      payload: body,
    });
    expect(res.statusCode, res.body).toBe(201);
    const { url, expiresAt } = res.json() as { url: string; expiresAt: string };
    return { url, expiresAt, token: new URL(url).hash.replace(/^#invite=/, "") };
  }

  const accept = (token: string, username: string, password = PASSWORD) =>
    t.app.inject({
      method: "POST",
      url: "/api/auth/accept-invite",
      payload: { token, username, password },
    });

  it("answers a link to the chat page, good for 7 days, with the token only in its fragment", async () => {
    const { url, expiresAt, token } = await invite({ role: "user", displayName: "Ada Lovelace" });
    expect(url).toMatch(/^https:\/\/chat\.example\.com\/app\/#invite=[A-Za-z0-9_-]{43}$/);
    const days = (Date.parse(expiresAt) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);
    // Stored hashed: the token itself is nowhere in the table.
    const rows = await t.ctx.db.selectFrom("invites").selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it("is for admins only", async () => {
    const user = await t.user();
    const res = await t.app.inject({
      method: "POST",
      url: "/api/admin/invites",
      headers: user.headers,
      payload: { role: "user" },
    });
    expect(res.statusCode).toBe(403);
  });

  it("creates the user with the invitation's role and name, signed in as login is", async () => {
    const { token } = await invite({ role: "admin", displayName: "Grace Hopper" });
    const res = await accept(token, "grace");
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().user).toMatchObject({
      username: "grace",
      displayName: "Grace Hopper",
      role: "admin",
    });
    expect(res.json().token).toMatch(/^pls_/);
    // PARLEY_PUBLIC_BASE_URL is https here: the cookie is Secure.
    expect(sessionCookie(res)).toMatchObject({ httpOnly: true, sameSite: "Lax", secure: true });
    const cookie = `parley_session=${sessionCookie(res).value}`;
    const me = await t.app.inject({ method: "GET", url: "/api/me", headers: { cookie } });
    expect(me.json()).toMatchObject({ username: "grace", role: "admin" });
    expect((await login(t, "grace", PASSWORD)).statusCode).toBe(200);
  });

  it("works once", async () => {
    const { token } = await invite();
    expect((await accept(token, "once-1")).statusCode).toBe(200);
    const again = await accept(token, "once-2");
    expect(again.statusCode).toBe(400);
    expect(again.json().code).toBe("invalid_invite");
  });

  it("is refused once expired, or unknown", async () => {
    const { token } = await invite();
    await t.ctx.db
      .updateTable("invites")
      .set({ expires_at: Date.now() - 1 })
      .execute();
    expect((await accept(token, "too-late")).json().code).toBe("invalid_invite");
    expect((await accept("x".repeat(43), "unknown")).json().code).toBe("invalid_invite");
  });

  it("stays unused when the username is taken, and refuses a short password", async () => {
    const { token } = await invite();
    const taken = await accept(token, "admin");
    expect(taken.statusCode).toBe(409);
    expect(taken.json().code).toBe("username_taken");
    expect((await accept(token, "shorty", "too short")).statusCode).toBe(400);
    expect((await accept(token, "free-name")).statusCode).toBe(200);
  });

  it("of two acceptances of one link at once, creates one user", async () => {
    const { token } = await invite();
    const answers = await Promise.all([accept(token, "race-a"), accept(token, "race-b")]);
    expect(answers.map((res) => res.statusCode).sort()).toEqual([200, 400]);
  });
});
