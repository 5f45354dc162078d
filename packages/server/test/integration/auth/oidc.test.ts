import type { AddressInfo } from "node:net";
import { OAuth2Server } from "oauth2-mock-server";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";

const CLIENT_ID = "parley-test";

/**
 * Single sign-on end to end against a real OpenID Connect provider on loopback
 * (oauth2-mock-server: discovery, an authorize endpoint that redirects back with a code, a token
 * endpoint that checks PKCE and signs ID tokens with the nonce). The browser's part (following
 * redirects, carrying cookies) is done by hand, as a browser would.
 */
describeEachDialect("single sign-on on $name", (dialect) => {
  let provider: OAuth2Server;
  let t: TestApp;
  let strict: TestApp;
  /** The account the provider signs in next. */
  let account: { sub: string; preferred_username?: string; name?: string } = { sub: "x" };

  beforeAll(async () => {
    provider = new OAuth2Server();
    await provider.issuer.keys.generate("RS256");
    await provider.start(0, "127.0.0.1");
    const port = (provider.address() as AddressInfo).port;
    provider.issuer.url = `http://127.0.0.1:${port}`;
    provider.service.on("beforeTokenSigning", (token: { payload: Record<string, unknown> }) => {
      Object.assign(token.payload, account);
    });
    const sso = {
      oidcIssuer: provider.issuer.url,
      oidcClientId: CLIENT_ID,
      oidcClientSecret: "a client secret",
      oidcName: "Acme SSO",
      publicBaseUrl: "http://parley.test",
    };
    t = await createTestApp(dialect, { ...sso, oidcAllowSignup: true });
    strict = await createTestApp(dialect, sso);
  });
  afterAll(async () => {
    await t?.close();
    await strict?.close();
    await provider?.stop();
  });

  /** start → the provider's authorize endpoint → the callback, carrying cookies as a browser. */
  async function signOn(app: TestApp, startUrl = "/api/auth/oidc/start") {
    const start = await app.app.inject({ method: "GET", url: startUrl });
    expect(start.statusCode, start.body).toBe(302);
    const authorize = new URL(start.headers.location as string);
    const stateCookie = start.cookies.find((c) => c.name === "parley_oidc_state")!;
    const atProvider = await fetch(authorize, { redirect: "manual" });
    expect(atProvider.status).toBe(302);
    const callback = new URL(atProvider.headers.get("location")!);
    expect(callback.origin + callback.pathname).toBe("http://parley.test/api/auth/oidc/callback");
    return app.app.inject({
      method: "GET",
      url: callback.pathname + callback.search,
      headers: { cookie: `parley_oidc_state=${stateCookie.value}` },
    });
  }

  it("offers the provider by its name", async () => {
    const res = await t.app.inject({ method: "GET", url: "/api/auth/providers" });
    expect(res.json()).toEqual({
      password: true,
      oidc: { name: "Acme SSO", startUrl: "/api/auth/oidc/start" },
    });
  });

  it("sends the browser to the provider with state, nonce and a PKCE S256 challenge", async () => {
    const start = await t.app.inject({ method: "GET", url: "/api/auth/oidc/start" });
    const url = new URL(start.headers.location as string);
    expect(url.origin).toBe(provider.issuer.url);
    expect(url.searchParams.get("client_id")).toBe(CLIENT_ID);
    expect(url.searchParams.get("redirect_uri")).toBe("http://parley.test/api/auth/oidc/callback");
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get("state")).toMatch(/.{20,}/);
    expect(url.searchParams.get("nonce")).toMatch(/.{20,}/);
    expect(url.searchParams.get("scope")).toContain("openid");
    const cookie = start.cookies.find((c) => c.name === "parley_oidc_state")!;
    expect(cookie).toMatchObject({ value: url.searchParams.get("state"), httpOnly: true });
  });

  it("creates a user at the first sign-on, signs them in, and finds them again by sub", async () => {
    account = { sub: "sub-ada-1", preferred_username: "Ada.L", name: "Ada Lovelace" };
    const res = await signOn(t);
    expect(res.statusCode, res.body).toBe(302);
    expect(res.headers.location).toBe("/app/");
    const session = res.cookies.find((c) => c.name === "parley_session")!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax" });
    const me = await t.app.inject({
      method: "GET",
      url: "/api/me",
      headers: { cookie: `parley_session=${session.value}` },
    });
    expect(me.json()).toMatchObject({
      username: "ada.l",
      displayName: "Ada Lovelace",
      role: "user",
    });

    // Same sub, another name at the provider: the same user.
    account = { sub: "sub-ada-1", preferred_username: "someone-else" };
    const again = await signOn(t);
    const cookie = `parley_session=${again.cookies.find((c) => c.name === "parley_session")!.value}`;
    const meAgain = await t.app.inject({ method: "GET", url: "/api/me", headers: { cookie } });
    expect(meAgain.json().id).toBe(me.json().id);
  });

  it("never matches a provider account to a user by name", async () => {
    account = { sub: "sub-mallory", preferred_username: "admin" };
    const res = await signOn(t);
    const cookie = `parley_session=${res.cookies.find((c) => c.name === "parley_session")!.value}`;
    const me = await t.app.inject({ method: "GET", url: "/api/me", headers: { cookie } });
    expect(me.json().role).toBe("user");
    expect(me.json().id).not.toBe(t.admin.id);
    expect(me.json().username).toBe("admin-2");
  });

  it("refuses an account no user is linked to when sign-up is off (403 signup_disabled)", async () => {
    account = { sub: "sub-stranger" };
    const res = await signOn(strict);
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe("signup_disabled");
    expect(res.cookies.find((c) => c.name === "parley_session")).toBeUndefined();
  });

  it("signs in a user an admin linked, when sign-up is off", async () => {
    const user = await strict.user();
    const link = await strict.app.inject({
      method: "POST",
      url: `/api/admin/users/${user.id}/identities`,
      headers: strict.admin.headers,
      payload: { subject: "sub-linked" },
    });
    expect(link.json()).toMatchObject({ issuer: provider.issuer.url, subject: "sub-linked" });
    account = { sub: "sub-linked" };
    const res = await signOn(strict);
    expect(res.statusCode, res.body).toBe(302);
    const cookie = `parley_session=${res.cookies.find((c) => c.name === "parley_session")!.value}`;
    const me = await strict.app.inject({ method: "GET", url: "/api/me", headers: { cookie } });
    expect(me.json().id).toBe(user.id);
  });

  it("refuses a callback without the state cookie of the browser that started it", async () => {
    account = { sub: "sub-csrf" };
    const start = await t.app.inject({ method: "GET", url: "/api/auth/oidc/start" });
    const atProvider = await fetch(new URL(start.headers.location as string), {
      redirect: "manual",
    });
    const callback = new URL(atProvider.headers.get("location")!);
    const res = await t.app.inject({ method: "GET", url: callback.pathname + callback.search });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe("invalid_credentials");
  });

  it("refuses a callback used twice", async () => {
    account = { sub: "sub-replay" };
    const start = await t.app.inject({ method: "GET", url: "/api/auth/oidc/start" });
    const state = start.cookies.find((c) => c.name === "parley_oidc_state")!.value;
    const atProvider = await fetch(new URL(start.headers.location as string), {
      redirect: "manual",
    });
    const callback = new URL(atProvider.headers.get("location")!);
    const follow = () =>
      t.app.inject({
        method: "GET",
        url: callback.pathname + callback.search,
        headers: { cookie: `parley_oidc_state=${state}` },
      });
    expect((await follow()).statusCode).toBe(302);
    expect((await follow()).statusCode).toBe(401);
  });

  it("returns to the admin UI when the start asks, and never to another site", async () => {
    account = { sub: "sub-admin-page" };
    const res = await signOn(t, "/api/auth/oidc/start?returnTo=/admin/");
    expect(res.headers.location).toBe("/admin/");
    for (const returnTo of ["https://evil.example/", "//evil.example/", "/admin/../../x"]) {
      const start = await t.app.inject({
        method: "GET",
        url: `/api/auth/oidc/start?returnTo=${encodeURIComponent(returnTo)}`,
      });
      expect(start.statusCode, returnTo).toBe(400);
    }
  });

  it("answers 404 when single sign-on is not configured", async () => {
    const plain = await createTestApp(dialect);
    try {
      const res = await plain.app.inject({ method: "GET", url: "/api/auth/oidc/start" });
      expect(res.statusCode).toBe(404);
    } finally {
      await plain.close();
    }
  });
});
