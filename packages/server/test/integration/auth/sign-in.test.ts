import crypto from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { verifications } from "../../../src/auth/password-hashing.js";
import { createTestApp, type TestApp } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { login, PASSWORD, sessionCookie, signIn, userWithPassword } from "./sign-in-helpers.js";

describeEachDialect("password sign-in on $name", (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    // Generous limits here; the rate-limit tests below run their own app with the defaults.
    t = await createTestApp(dialect, {
      rateLimitLoginUsername: "1000/1m",
      rateLimitLoginAddress: "1000/1m",
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it("answers the session and the user, and sets an HttpOnly, SameSite=Lax session cookie", async () => {
    const user = await userWithPassword(t);
    const res = await login(t, user.username, PASSWORD);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.user).toMatchObject({ id: user.id, username: user.username, role: "user" });
    expect(body.token).toMatch(/^pls_[A-Za-z0-9_-]{43}$/);
    const expiresIn = Date.parse(body.expiresAt) - Date.now();
    expect(expiresIn).toBeGreaterThan(13 * 24 * 3600_000);
    const cookie = sessionCookie(res);
    expect(cookie).toMatchObject({ value: body.token, httpOnly: true, sameSite: "Lax", path: "/" });
    // Plain http without an https public address: a Secure cookie would never come back.
    expect(cookie.secure).toBeUndefined();
  });

  it("stores an argon2id hash of the password and only the hash of the session", async () => {
    const user = await userWithPassword(t);
    const row = await t.ctx.db
      .selectFrom("users")
      .select("password_hash")
      .where("id", "=", user.id)
      .executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=65536,t=4,p=1\$/);
    expect(row.password_hash).not.toContain(PASSWORD);
    const { token } = (await login(t, user.username, PASSWORD)).json() as { token: string };
    const sessions = await t.ctx.db.selectFrom("sessions").selectAll().execute();
    expect(JSON.stringify(sessions)).not.toContain(token);
    expect(sessions.map((session) => session.id_hash)).toContain(
      crypto.createHash("sha256").update(token).digest("hex"),
    );
  });

  it("authenticates the API by the cookie and by the session token as a bearer token", async () => {
    const user = await userWithPassword(t);
    const browser = await signIn(t, user.username);
    const byCookie = await t.app.inject({
      method: "GET",
      url: "/api/me",
      headers: { cookie: browser.cookie },
    });
    expect(byCookie.statusCode).toBe(200);
    expect(byCookie.json()).toMatchObject({ id: user.id, role: "user" });
    const byBearer = await t.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: { authorization: `Bearer ${browser.token}` },
      payload: { name: "by bearer session" },
    });
    expect(byBearer.statusCode).toBe(201);
  });

  it("GET /api/me answers any principal, with its role", async () => {
    const me = await t.app.inject({ method: "GET", url: "/api/me", headers: t.admin.headers });
    expect(me.json()).toMatchObject({ id: t.admin.id, username: "admin", role: "admin" });
    const bot = await t.user("bot");
    const botMe = await t.app.inject({ method: "GET", url: "/api/me", headers: bot.headers });
    expect(botMe.json()).toMatchObject({ id: bot.id, role: "bot" });
    expect((await t.app.inject({ method: "GET", url: "/api/me" })).statusCode).toBe(401);
  });

  it("refuses a cookie-authenticated unsafe request without the CSRF header (403 csrf_required)", async () => {
    const user = await userWithPassword(t);
    const browser = await signIn(t, user.username);
    const post = (headers: Record<string, string>) =>
      t.app.inject({ method: "POST", url: "/api/rooms", headers, payload: { name: "csrf" } });
    const without = await post({ cookie: browser.cookie });
    expect(without.statusCode).toBe(403);
    expect(without.json().code).toBe("csrf_required");
    const wrong = await post({ cookie: browser.cookie, "x-parley-csrf": "x".repeat(32) });
    expect(wrong.json().code).toBe("csrf_required");
    const other = await signIn(t, user.username);
    const othersValue = await post({ cookie: browser.cookie, "x-parley-csrf": other.csrf });
    expect(othersValue.json().code).toBe("csrf_required");
    expect((await post({ cookie: browser.cookie, "x-parley-csrf": browser.csrf })).statusCode).toBe(
      201,
    );
    // Safe methods need no header; bearer tokens never do.
    const read = await t.app.inject({
      method: "GET",
      url: "/api/rooms",
      headers: { cookie: browser.cookie },
    });
    expect(read.statusCode).toBe(200);
    expect((await post({ authorization: `Bearer ${browser.token}` })).statusCode).toBe(201);
    expect((await post(user.headers)).statusCode).toBe(201);
  });

  it("has no CSRF value for a JWT, which needs none", async () => {
    const res = await t.app.inject({
      method: "GET",
      url: "/api/auth/csrf",
      headers: t.admin.headers,
    });
    expect(res.statusCode).toBe(404);
  });

  it("answers every failure with the same 401 invalid_credentials, after a verify each time", async () => {
    const user = await userWithPassword(t);
    const disabled = await userWithPassword(t);
    await t.app.inject({
      method: "POST",
      url: `/api/admin/users/${disabled.id}/disable`,
      headers: t.admin.headers,
    });
    const noPassword = await t.user();
    const failures = [
      ["unknown user", "nobody-here", PASSWORD],
      ["wrong password", user.username, "wrong password 123"],
      ["disabled user", disabled.username, PASSWORD],
      ["user without a password", noPassword.username, PASSWORD],
    ] as const;
    const bodies = [];
    for (const [what, username, password] of failures) {
      const before = verifications.real + verifications.dummy;
      const res = await login(t, username, password);
      expect(res.statusCode, what).toBe(401);
      expect(res.cookies, what).toEqual([]);
      expect(verifications.real + verifications.dummy, `${what} runs one verify`).toBe(before + 1);
      bodies.push(res.body);
    }
    expect(new Set(bodies).size).toBe(1);
    expect(JSON.parse(bodies[0]!)).toMatchObject({ code: "invalid_credentials", status: 401 });
  });

  it("takes about as long for an unknown username as for a wrong password", async () => {
    const user = await userWithPassword(t);
    const time = async (username: string) => {
      const started = performance.now();
      expect((await login(t, username, "not the password")).statusCode).toBe(401);
      return performance.now() - started;
    };
    const median = (values: number[]) =>
      values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const unknown: number[] = [];
    const known: number[] = [];
    // Interleaved, so a busy moment of the machine hits both.
    for (let i = 0; i < 5; i++) {
      unknown.push(await time(`unknown-${i}`));
      known.push(await time(user.username));
    }
    const ratio = median(unknown) / median(known);
    expect(
      ratio,
      `unknown ${median(unknown)} ms, wrong password ${median(known)} ms`,
    ).toBeGreaterThan(0.5);
    expect(ratio).toBeLessThan(2);
  });

  it("issues a fresh session at each login: a cookie set before it is neither kept nor valid", async () => {
    const user = await userWithPassword(t);
    const planted = "pls_" + "A".repeat(43);
    const res = await login(t, user.username, PASSWORD, { cookie: `parley_session=${planted}` });
    expect(res.statusCode).toBe(200);
    expect(sessionCookie(res).value).not.toBe(planted);
    const withPlanted = await t.app.inject({
      method: "GET",
      url: "/api/me",
      headers: { cookie: `parley_session=${planted}` },
    });
    expect(withPlanted.statusCode).toBe(401);

    // A session the browser already had is ended, not carried over.
    const first = await signIn(t, user.username);
    const again = await login(t, user.username, PASSWORD, { cookie: first.cookie });
    expect(`parley_session=${sessionCookie(again).value}`).not.toBe(first.cookie);
    const old = await t.app.inject({
      method: "GET",
      url: "/api/me",
      headers: { cookie: first.cookie },
    });
    expect(old.statusCode).toBe(401);
  });

  it("logout ends the session for its cookie and its token, and clears the cookie", async () => {
    const user = await userWithPassword(t);
    const browser = await signIn(t, user.username);
    const noCsrf = await t.app.inject({
      method: "POST",
      url: "/api/auth/logout",
      headers: { cookie: browser.cookie },
    });
    expect(noCsrf.statusCode).toBe(403);
    const res = await t.app.inject({
      method: "POST",
      url: "/api/auth/logout",
      headers: { cookie: browser.cookie, "x-parley-csrf": browser.csrf },
    });
    expect(res.statusCode).toBe(204);
    expect(sessionCookie(res).value).toBe("");
    for (const headers of [
      { cookie: browser.cookie },
      { authorization: `Bearer ${browser.token}` },
    ]) {
      const me = await t.app.inject({ method: "GET", url: "/api/me", headers });
      expect(me.statusCode).toBe(401);
    }
  });

  it("a password change needs the current password and ends the user's other sessions", async () => {
    const user = await userWithPassword(t);
    const here = await signIn(t, user.username);
    const elsewhere = await signIn(t, user.username);
    const change = (currentPassword: string, newPassword: string) =>
      t.app.inject({
        method: "PUT",
        url: "/api/me/password",
        headers: { cookie: here.cookie, "x-parley-csrf": here.csrf },
        payload: { currentPassword, newPassword },
      });
    const wrong = await change("not my password", "a new password 1");
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().code).toBe("invalid_credentials");
    expect((await change(PASSWORD, "too short")).statusCode).toBe(400);
    expect((await change(PASSWORD, "x".repeat(1025))).statusCode).toBe(400);
    expect((await change(PASSWORD, "a new password 1")).statusCode).toBe(204);

    const me = (cookie: string) =>
      t.app.inject({ method: "GET", url: "/api/me", headers: { cookie } });
    expect((await me(here.cookie)).statusCode).toBe(200);
    expect((await me(elsewhere.cookie)).statusCode).toBe(401);
    expect((await login(t, user.username, PASSWORD)).statusCode).toBe(401);
    expect((await login(t, user.username, "a new password 1")).statusCode).toBe(200);
  });

  it("ends a disabled user's sessions at their next request", async () => {
    const user = await userWithPassword(t);
    const browser = await signIn(t, user.username);
    await t.app.inject({
      method: "POST",
      url: `/api/admin/users/${user.id}/disable`,
      headers: t.admin.headers,
    });
    const me = await t.app.inject({
      method: "GET",
      url: "/api/me",
      headers: { cookie: browser.cookie },
    });
    expect(me.statusCode).toBe(401);
  });

  it("offers passwords, and single sign-on only when it is configured", async () => {
    const res = await t.app.inject({ method: "GET", url: "/api/auth/providers" });
    expect(res.json()).toEqual({ password: true, oidc: null });
  });
});

describeEachDialect("the login rate limit on $name", (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect, { rateLimitLoginAddress: "8/1m" });
  });
  afterAll(async () => {
    await t.close();
  });

  it("refuses the 6th failed sign-in for a username in a minute with 429 and Retry-After", async () => {
    const user = await userWithPassword(t);
    for (let i = 0; i < 5; i++)
      expect((await login(t, user.username, `guess number ${i}`, {}, "10.0.0.1")).statusCode).toBe(
        401,
      );
    const limited = await login(t, user.username, "guess number 6", {}, "10.0.0.2");
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe("rate_limited");
    const retryAfter = Number(limited.headers["retry-after"]);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Even the right password is not tried while the username is limited.
    expect((await login(t, user.username, PASSWORD, {}, "10.0.0.3")).statusCode).toBe(429);
    // Another username is not affected.
    const other = await userWithPassword(t);
    expect((await login(t, other.username, PASSWORD, {}, "10.0.0.4")).statusCode).toBe(200);
  });

  it("counts unknown usernames like known ones", async () => {
    for (let i = 0; i < 5; i++)
      expect((await login(t, "no-such-user", "guess", {}, "10.0.1.1")).statusCode).toBe(401);
    expect((await login(t, "no-such-user", "guess", {}, "10.0.1.2")).statusCode).toBe(429);
  });

  it("does not count successful sign-ins", async () => {
    const user = await userWithPassword(t);
    for (let i = 0; i < 8; i++)
      expect((await login(t, user.username, PASSWORD, {}, `10.0.2.${i}`)).statusCode).toBe(200);
  });

  it("limits failures per address across usernames", async () => {
    for (let i = 0; i < 8; i++)
      expect((await login(t, `spray-${i}`, "guess", {}, "10.0.3.1")).statusCode).toBe(401);
    const limited = await login(t, "spray-9", "guess", {}, "10.0.3.1");
    expect(limited.statusCode).toBe(429);
    expect(limited.headers["retry-after"]).toBeDefined();
  });

  it("lets at most the limit through when guesses arrive at once", async () => {
    const user = await userWithPassword(t);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        login(t, user.username, `parallel ${i}`, {}, `10.0.4.${i}`),
      ),
    );
    const statuses = answers.map((res) => res.statusCode);
    // Each attempt counts the others in flight: never more than the limit are tried (fewer, even
    // none, when refused attempts were still being counted), and every other one is refused.
    const tried = statuses.filter((status) => status === 401).length;
    expect(tried).toBeLessThanOrEqual(5);
    expect(statuses.filter((status) => status === 429).length).toBe(12 - tried);
  });
});
