import http from "node:http";
import type { AddressInfo } from "node:net";
import { SignJWT, exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../helpers/build-app.js";
import { describeEachDialect, SQLITE } from "../../helpers/dialects.js";

const PROTECTED = "/api/admin/users";

function base64url(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

describeEachDialect("bearer tokens on $name", (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });

  async function get(authorization?: string) {
    return t.app.inject({
      method: "GET",
      url: PROTECTED,
      headers: authorization ? { authorization } : {},
    });
  }

  function expectUnauthorized(res: Awaited<ReturnType<typeof get>>) {
    expect(res.statusCode).toBe(401);
    expect(res.headers["www-authenticate"]).toMatch(/^Bearer/);
    expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(res.json().code).toBe("unauthorized");
  }

  it("accepts a valid admin token", async () => {
    expect((await get(t.admin.headers.authorization)).statusCode).toBe(200);
  });

  it("answers 401 with WWW-Authenticate when the token is missing", async () => {
    expectUnauthorized(await get());
  });

  it("answers 401 for a malformed header or token", async () => {
    expectUnauthorized(await get("Basic YWRtaW46YWRtaW4="));
    expectUnauthorized(await get("Bearer not-a-jwt"));
    expectUnauthorized(await get("Bearer"));
  });

  it("answers 401 for a token signed with another key", async () => {
    const forged = await new SignJWT({ role: "admin" })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(String(t.admin.id))
      .setIssuer("parley")
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode("a-different-key-that-is-long-enough-000000"));
    expectUnauthorized(await get(`Bearer ${forged}`));
  });

  it("answers 401 for an alg:none token", async () => {
    const unsigned = `${base64url({ alg: "none", typ: "JWT" })}.${base64url({
      sub: String(t.admin.id),
      role: "admin",
      iss: "parley",
      exp: Math.floor(Date.now() / 1000) + 3600,
    })}.`;
    expectUnauthorized(await get(`Bearer ${unsigned}`));
  });

  it("answers 401 for an expired token", async () => {
    const expired = await new SignJWT({ role: "admin" })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(String(t.admin.id))
      .setIssuer("parley")
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(t.ctx.keys.jwtSecret);
    const res = await get(`Bearer ${expired}`);
    expectUnauthorized(res);
    expect(res.json().detail).toContain("expired");
  });

  it("answers 403 for a valid token without the needed role", async () => {
    const user = await t.user("user");
    const bot = await t.user("bot");
    for (const caller of [user, bot]) {
      const res = await get(caller.headers.authorization);
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe("forbidden");
    }
  });

  it("stops a disabled user's token", async () => {
    const admin2 = await t.user("admin");
    expect((await get(admin2.headers.authorization)).statusCode).toBe(200);
    await t.app.inject({
      method: "POST",
      url: `/api/admin/users/${admin2.id}/disable`,
      headers: t.admin.headers,
    });
    expectUnauthorized(await get(admin2.headers.authorization));
  });

  it("stops a deleted user's token", async () => {
    const admin3 = await t.user("admin");
    expect((await get(admin3.headers.authorization)).statusCode).toBe(200);
    await t.app.inject({
      method: "DELETE",
      url: `/api/admin/users/${admin3.id}`,
      headers: t.admin.headers,
    });
    expectUnauthorized(await get(admin3.headers.authorization));
  });

  it("answers 401 for a token whose role no longer matches the user's", async () => {
    const demoted = await t.user("admin");
    expect((await get(demoted.headers.authorization)).statusCode).toBe(200);
    // The role in force is the stored one: an admin token of a user who is now a plain user
    // is not honoured, neither as admin nor as user.
    await t.ctx.db
      .updateTable("users")
      .set({ role: "user" })
      .where("id", "=", demoted.id)
      .execute();
    const res = await get(demoted.headers.authorization);
    expectUnauthorized(res);
    expect(res.json().detail).toBe("the token's role no longer matches the user");
    const asUser = await t.app.inject({
      method: "GET",
      url: "/api/rooms",
      headers: demoted.headers,
    });
    expect(asUser.statusCode).toBe(401);
  });

  it("answers 401 for a token of ours whose subject is not a user id", async () => {
    for (const subject of [t.admin.username, `${t.admin.id}x`, "", " 1", "-1"]) {
      const token = await new SignJWT({ role: "admin" })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject(subject)
        .setIssuer("parley")
        .setExpirationTime("1h")
        .sign(t.ctx.keys.jwtSecret);
      const res = await get(`Bearer ${token}`);
      expectUnauthorized(res);
      expect(res.json().detail, subject).toBe("token subject is not a user id");
    }
  });
});

describe("identity-provider tokens", () => {
  let t: TestApp;
  let jwks: http.Server;
  let privateKey: CryptoKey;

  beforeAll(async () => {
    const pair = await generateKeyPair("RS256");
    privateKey = pair.privateKey as CryptoKey;
    const publicJwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
    jwks = http.createServer((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ keys: [publicJwk] }));
    });
    await new Promise<void>((resolve) => jwks.listen(0, "127.0.0.1", resolve));
    const port = (jwks.address() as AddressInfo).port;
    t = await createTestApp(SQLITE, {
      jwtJwksUrl: `http://127.0.0.1:${port}/jwks.json`,
      jwtIssuer: "https://idp.example.com",
      jwtAudience: "parley",
    });
  });
  afterAll(async () => {
    await t.close();
    await new Promise((resolve) => jwks.close(resolve));
  });

  function idpToken(claims: { iss?: string; aud?: string; sub?: string }) {
    return new SignJWT({ role: "admin" })
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setSubject(claims.sub ?? "admin")
      .setIssuer(claims.iss ?? "https://idp.example.com")
      .setAudience(claims.aud ?? "parley")
      .setExpirationTime("10m")
      .sign(privateKey);
  }

  it("accepts a token of the configured provider for a subject linked to a user", async () => {
    const link = await t.app.inject({
      method: "POST",
      url: `/api/admin/users/${t.admin.id}/identities`,
      headers: t.admin.headers,
      payload: { subject: "admin" },
    });
    expect(link.statusCode).toBe(201);
    const res = await t.app.inject({
      method: "GET",
      url: PROTECTED,
      headers: { authorization: `Bearer ${await idpToken({})}` },
    });
    expect(res.statusCode).toBe(200);
  });

  it("refuses a provider token with the wrong issuer or audience, or an unknown subject", async () => {
    for (const claims of [
      { iss: "https://evil.example.com" },
      { aud: "someone-else" },
      { sub: "nobody" },
    ]) {
      const res = await t.app.inject({
        method: "GET",
        url: PROTECTED,
        headers: { authorization: `Bearer ${await idpToken(claims)}` },
      });
      expect(res.statusCode).toBe(401);
    }
  });
});
