import http from "node:http";
import type { AddressInfo } from "node:net";
import { SignJWT, exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect, SQLITE } from "../../helpers/dialects.js";

async function issue(t: TestApp, userId: number): Promise<{ token: string; tokenId: string }> {
  const res = await t.app.inject({
    method: "POST",
    url: `/api/admin/users/${userId}/tokens`,
    headers: t.admin.headers,
  });
  expect(res.statusCode).toBe(201);
  return res.json();
}

async function status(t: TestApp, token: string): Promise<number> {
  const res = await t.app.inject({
    url: "/api/rooms",
    headers: { authorization: `Bearer ${token}` },
  });
  return res.statusCode;
}

describeEachDialect("token revocation on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    alice = await t.user("user", "alice");
  });
  afterAll(async () => {
    await t.close();
  });

  it("revokes one token by its id and leaves the user's others working", async () => {
    const first = await issue(t, alice.id);
    const second = await issue(t, alice.id);
    expect(first.tokenId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const revoke = await t.app.inject({
      method: "DELETE",
      url: `/api/admin/tokens/${first.tokenId}`,
      headers: t.admin.headers,
    });
    expect(revoke.statusCode).toBe(204);
    expect(await status(t, first.token)).toBe(401);
    expect(await status(t, second.token)).toBe(200);
  });

  it("revokes every token a user holds, and tokens issued afterwards work", async () => {
    const bob = await t.user("user", "bob");
    const held = await issue(t, bob.id);
    const revoke = await t.app.inject({
      method: "POST",
      url: `/api/admin/users/${bob.id}/revoke-tokens`,
      headers: t.admin.headers,
    });
    expect(revoke.statusCode).toBe(204);
    expect(await status(t, bob.token)).toBe(401);
    expect(await status(t, held.token)).toBe(401);
    // iat has one-second resolution: a token issued in the same second as the revocation is revoked too.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await status(t, (await issue(t, bob.id)).token)).toBe(200);
  });

  it("lets only admins revoke", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: `/api/admin/users/${alice.id}/revoke-tokens`,
      headers: alice.headers,
    });
    expect(res.statusCode).toBe(403);
  });
});

describe("identity-provider subjects", () => {
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
    t = await createTestApp(SQLITE, {
      jwtJwksUrl: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`,
      jwtIssuer: "https://idp.example.com",
      jwtAudience: "parley",
    });
  });
  afterAll(async () => {
    await t.close();
    await new Promise((resolve) => jwks.close(resolve));
  });

  const idpToken = (sub: string) =>
    new SignJWT({})
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setSubject(sub)
      .setIssuer("https://idp.example.com")
      .setAudience("parley")
      .setExpirationTime("10m")
      .sign(privateKey);

  it("does not map a provider subject onto the local user of the same name", async () => {
    const res = await t.app.inject({
      url: "/api/admin/users",
      headers: { authorization: `Bearer ${await idpToken("admin")}` },
    });
    expect(res.statusCode).toBe(401);
  });

  it("maps a provider subject to the user an admin linked it to", async () => {
    const carol = await t.user("user", "carol");
    const link = await t.app.inject({
      method: "POST",
      url: `/api/admin/users/${carol.id}/identities`,
      headers: t.admin.headers,
      payload: { subject: "00u1a2b3c4" },
    });
    expect(link.statusCode).toBe(201);
    const res = await t.app.inject({
      url: "/api/rooms",
      headers: { authorization: `Bearer ${await idpToken("00u1a2b3c4")}` },
    });
    expect(res.statusCode).toBe(200);
  });
});
