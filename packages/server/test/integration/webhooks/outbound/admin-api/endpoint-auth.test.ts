import type { Webhook } from "@parley/client";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { startTokenServer, type TokenServer } from "../../../../helpers/oauth2-token-server.js";
import type { Receiver } from "../../../../helpers/receiver.js";
import { startOperatingApp, type OperatingApp } from "./operating-fixture.js";

/** A receiver that accepts only access tokens the token server signed (an OAuth2-protected API). */
function protectedBy(tokens: TokenServer, receiver: Receiver, revoked = new Set<string>()) {
  receiver.respondWith(async (request) => {
    const header = request.headers.authorization ?? "";
    if (!header.startsWith("Bearer ")) return { status: 401 };
    const token = header.slice("Bearer ".length);
    if (revoked.has(token)) return { status: 401, body: "token revoked" };
    try {
      await tokens.verify(token);
      return { status: 204 };
    } catch {
      return { status: 401 };
    }
  });
  return revoked;
}

describeEachDialect("Receiver authentication (auth) on $name", (dialect) => {
  let d: OperatingApp;
  let tokens: TokenServer;
  beforeAll(async () => {
    d = await startOperatingApp(dialect);
    tokens = await startTokenServer();
  });
  afterAll(async () => {
    await d?.close();
    await tokens?.close();
  });

  /** The token requests made by one client: other tests' endpoints may still be retrying. */
  const requestsOf = (clientId: string) =>
    tokens.requests.filter((request) => request.basic?.clientId === clientId);

  async function lastAttempt(endpoint: Webhook) {
    const list = await d.api("GET", `/api/admin/webhooks/${endpoint.id}/deliveries`);
    const [summary] = list.json().items as Array<{ id: number }>;
    const detail = await d.api(
      "GET",
      `/api/admin/webhooks/${endpoint.id}/deliveries/${summary!.id}`,
    );
    return detail.json().attemptHistory.at(-1) as {
      responseStatus: number | null;
      error: string | null;
      requestHeaders: Record<string, string>;
    };
  }

  it("sends HTTP Basic credentials, shows the password masked and logs Authorization masked", async () => {
    const receiver = await d.receiver();
    const endpoint = await d.create({
      url: receiver.url,
      auth: { type: "basic", username: "parley", password: "correct horse battery" },
    });
    expect(endpoint.auth).toEqual({ type: "basic", username: "parley", password: "****tery" });
    await d.emitUser("basic-auth");
    const [request] = await receiver.waitForRequests(1);
    expect(request!.headers.authorization).toBe(
      `Basic ${Buffer.from("parley:correct horse battery").toString("base64")}`,
    );
    await d.dispatcher.idle();
    const attempt = await lastAttempt(endpoint);
    expect(attempt.requestHeaders.authorization).toBe("Basic ****");
    const stored = await d.t.ctx.db
      .selectFrom("webhooks")
      .select("auth_ciphertext")
      .where("id", "=", endpoint.id)
      .executeTakeFirstOrThrow();
    expect(stored.auth_ciphertext).not.toContain("correct horse");
  });

  it("sends a bearer token and shows only its last characters", async () => {
    const receiver = await d.receiver();
    const endpoint = await d.create({
      url: receiver.url,
      auth: { type: "bearer", token: "static-token-0123456789" },
    });
    expect(endpoint.auth).toEqual({ type: "bearer", token: "****6789" });
    await d.emitUser("bearer-auth");
    const [request] = await receiver.waitForRequests(1);
    expect(request!.headers.authorization).toBe("Bearer static-token-0123456789");
    const read = await d.api("GET", `/api/admin/webhooks/${endpoint.id}`);
    expect(JSON.stringify(read.json())).not.toContain("static-token");
  });

  it("gets an OAuth 2.0 token by client credentials (client_secret_basic, scope and audience as form parameters) and shares it across deliveries", async () => {
    const receiver = await d.receiver();
    protectedBy(tokens, receiver);
    const endpoint = await d.create({
      url: receiver.url,
      auth: {
        type: "oauth2",
        tokenUrl: tokens.tokenUrl,
        clientId: "parley client",
        clientSecret: "s3cret:with/odd+chars",
        scope: "webhooks.write",
        audience: "https://receiver.example",
      },
    });
    expect(endpoint.auth).toMatchObject({
      type: "oauth2",
      tokenUrl: tokens.tokenUrl,
      clientId: "parley client",
      clientSecret: "****hars",
      scope: "webhooks.write",
      audience: "https://receiver.example",
    });
    for (const name of ["o1", "o2", "o3", "o4"]) await d.emitUser(name);
    const requests = await receiver.waitForRequests(4);
    await d.dispatcher.idle();
    const ours = requestsOf("parley client");
    expect(ours).toHaveLength(1);
    expect(ours[0]!.basic).toEqual({
      clientId: "parley client",
      clientSecret: "s3cret:with/odd+chars",
    });
    expect(ours[0]!.form).toMatchObject({
      grant_type: "client_credentials",
      scope: "webhooks.write",
      audience: "https://receiver.example",
    });
    // No client secret in the form: client_secret_basic only.
    expect(ours[0]!.form.client_secret).toBeUndefined();
    const used = new Set(requests.map((r) => r.headers.authorization));
    expect(used.size).toBe(1);
    const claims = await tokens.verify([...used][0]!.slice("Bearer ".length));
    expect(claims.scope).toBe("webhooks.write");
    expect((await lastAttempt(endpoint)).requestHeaders.authorization).toBe("Bearer ****");
  });

  it("fetches a new token 30 s before the old one expires", async () => {
    const receiver = await d.receiver();
    protectedBy(tokens, receiver);
    // expires_in 31: usable for 1 s, then due for refresh.
    tokens.answerWith(() => ({ body: { expires_in: 31 } }));
    onTestFinished(() => tokens.answerWith(null));
    await d.create({
      url: receiver.url,
      auth: {
        type: "oauth2",
        tokenUrl: tokens.tokenUrl,
        clientId: "refresh",
        clientSecret: "refresh-secret",
      },
    });
    await d.emitUser("r1");
    await d.emitUser("r2");
    await receiver.waitForRequests(2);
    expect(requestsOf("refresh")).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await d.emitUser("r3");
    await receiver.waitForRequests(3);
    expect(requestsOf("refresh")).toHaveLength(2);
  });

  it("fetches a new token once when the receiver answers 401, and records the one attempt as a success", async () => {
    const receiver = await d.receiver();
    const revoked = protectedBy(tokens, receiver);
    const endpoint = await d.create({
      url: receiver.url,
      auth: {
        type: "oauth2",
        tokenUrl: tokens.tokenUrl,
        clientId: "revoked",
        clientSecret: "revoked-secret",
      },
    });
    await d.emitUser("first");
    const [first] = await receiver.waitForRequests(1);
    await d.dispatcher.idle();
    // The receiver revokes the token Parley holds: the next delivery's first try gets 401.
    revoked.add(first!.headers.authorization!.slice("Bearer ".length));
    await d.emitUser("second");
    const all = await receiver.waitForRequests(3);
    await d.dispatcher.idle();
    expect(requestsOf("revoked")).toHaveLength(2);
    expect(all[1]!.headers.authorization).toBe(first!.headers.authorization);
    expect(all[2]!.headers.authorization).not.toBe(first!.headers.authorization);
    const list = await d.api("GET", `/api/admin/webhooks/${endpoint.id}/deliveries`);
    const [latest] = list.json().items as Array<{ status: string; attempts: number }>;
    expect(latest).toMatchObject({ status: "SUCCESS", attempts: 1 });
  });

  it("refreshes only once: a receiver that keeps answering 401 fails the attempt with its answer", async () => {
    const receiver = await d.receiver();
    receiver.respondWith(() => ({ status: 401, body: "no" }));
    const endpoint = await d.create({
      url: receiver.url,
      auth: {
        type: "oauth2",
        tokenUrl: tokens.tokenUrl,
        clientId: "always401",
        clientSecret: "always-secret",
      },
    });
    await d.emitUser("always");
    await receiver.waitForRequests(2);
    // Disabled, it gets no retries: the attempts so far are all there is to count.
    await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { enabled: false });
    await d.dispatcher.idle();
    const list = await d.api("GET", `/api/admin/webhooks/${endpoint.id}/deliveries`);
    const [summary] = list.json().items as Array<{ id: number }>;
    const detail = await d.api(
      "GET",
      `/api/admin/webhooks/${endpoint.id}/deliveries/${summary!.id}`,
    );
    const history = detail.json().attemptHistory as Array<{
      responseStatus: number;
      error: string;
    }>;
    // Each attempt: the token it holds, a 401, a new token, a 401; never a third try. The first
    // attempt fetched its first token too.
    expect(receiver.requests).toHaveLength(2 * history.length);
    expect(requestsOf("always401")).toHaveLength(history.length + 1);
    expect(history[0]).toMatchObject({ responseStatus: 401, error: "receiver answered HTTP 401" });
  });

  it("fails the attempt without contacting the receiver when the token request fails, naming the token endpoint's answer", async () => {
    const receiver = await d.receiver();
    tokens.answerWith(() => ({
      status: 401,
      body: { error: "invalid_client", error_description: "Client authentication failed" },
    }));
    onTestFinished(() => tokens.answerWith(null));
    const endpoint = await d.create({
      url: receiver.url,
      auth: {
        type: "oauth2",
        tokenUrl: tokens.tokenUrl,
        clientId: "wrong",
        clientSecret: "wrong-secret",
      },
    });
    await d.emitUser("token-fails");
    let attempt: Awaited<ReturnType<typeof lastAttempt>> | undefined;
    await expect
      .poll(async () => (attempt = await lastAttempt(endpoint).catch(() => undefined)), {
        interval: 50,
        timeout: 5_000,
      })
      .toBeDefined();
    expect(attempt!.responseStatus).toBeNull();
    expect(attempt!.error).toBe(
      `OAuth token request to ${tokens.tokenUrl} failed: the token endpoint answered HTTP 401 invalid_client: Client authentication failed`,
    );
    expect(receiver.requests).toHaveLength(0);
  });

  it("names a token endpoint that answers no OAuth error, and one that cannot be reached", async () => {
    const receiver = await d.receiver();
    tokens.answerWith(() => ({ status: 503, body: { message: "maintenance" } }));
    onTestFinished(() => tokens.answerWith(null));
    const endpoint = await d.create({
      url: receiver.url,
      auth: {
        type: "oauth2",
        tokenUrl: tokens.tokenUrl,
        clientId: "down",
        clientSecret: "down-secret",
      },
    });
    await d.emitUser("token-503");
    await expect
      .poll(async () => (await lastAttempt(endpoint).catch(() => undefined))?.error, {
        interval: 50,
        timeout: 5_000,
      })
      .toBe(
        `OAuth token request to ${tokens.tokenUrl} failed: the token endpoint answered HTTP 503: {"message":"maintenance"}`,
      );

    const closed = await d.receiver();
    const deadUrl = `${closed.origin}/token`;
    await closed.close();
    const unreachable = await d.create({
      url: receiver.url,
      auth: { type: "oauth2", tokenUrl: deadUrl, clientId: "gone", clientSecret: "gone-secret" },
    });
    await d.emitUser("token-unreachable");
    await expect
      .poll(async () => (await lastAttempt(unreachable).catch(() => undefined))?.error, {
        interval: 50,
        timeout: 5_000,
      })
      .toMatch(new RegExp(`^OAuth token request to ${deadUrl} failed: connection refused`));
    expect(receiver.requests).toHaveLength(0);
  });

  it("makes Authorization a reserved header name while auth is set, whichever comes first", async () => {
    const receiver = await d.receiver();
    const both = await d.api("POST", "/api/admin/webhooks", {
      name: "both",
      url: receiver.url,
      secret: "0123456789abcdef",
      events: ["ADMIN_USER_DISABLED"],
      auth: { type: "bearer", token: "t0k3n-value" },
      headers: { Authorization: "Bearer other" },
    });
    expect(both.statusCode).toBe(400);
    expect(both.json().code).toBe("header_reserved");

    // Without auth the header is allowed, as before; adding auth then is refused.
    const plain = await d.create({ url: receiver.url, headers: { Authorization: "Bearer mine" } });
    const addAuth = await d.api("PATCH", `/api/admin/webhooks/${plain.id}`, {
      auth: { type: "bearer", token: "t0k3n-value" },
    });
    expect(addAuth.statusCode).toBe(400);
    expect(addAuth.json().code).toBe("header_reserved");

    const authed = await d.create({
      url: receiver.url,
      auth: { type: "bearer", token: "t0k3n-value" },
    });
    const addHeader = await d.api("PATCH", `/api/admin/webhooks/${authed.id}`, {
      headers: { authorization: "Bearer other" },
    });
    expect(addHeader.statusCode).toBe(400);
    expect(addHeader.json().code).toBe("header_reserved");
    // Clearing auth frees the name again.
    const cleared = await d.api("PATCH", `/api/admin/webhooks/${authed.id}`, {
      auth: null,
      headers: { authorization: "Bearer other" },
    });
    expect(cleared.statusCode).toBe(200);
    expect(cleared.json().auth).toBeNull();
  });

  it("keeps a stored secret when a PATCH of the same type omits it, and asks for it when the type changes", async () => {
    const receiver = await d.receiver();
    protectedBy(tokens, receiver);
    const endpoint = await d.create({
      url: receiver.url,
      auth: {
        type: "oauth2",
        tokenUrl: tokens.tokenUrl,
        clientId: "keep",
        clientSecret: "kept-secret-value",
      },
    });
    const patched = await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, {
      auth: { type: "oauth2", tokenUrl: tokens.tokenUrl, clientId: "keep", scope: "narrower" },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().auth).toMatchObject({ scope: "narrower", clientSecret: "****alue" });
    await d.emitUser("kept");
    await receiver.waitForRequests(1);
    const [asked] = requestsOf("keep");
    expect(asked!.basic!.clientSecret).toBe("kept-secret-value");
    expect(asked!.form.scope).toBe("narrower");

    const switched = await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, {
      auth: { type: "basic", username: "someone" },
    });
    expect(switched.statusCode).toBe(400);
    expect(switched.json()).toMatchObject({ code: "invalid_auth" });
    expect(switched.json().detail).toContain("auth.password is required");
  });

  it("refuses auth that does not fit its type, without echoing credentials", async () => {
    const cases: Array<[object, string]> = [
      [{ type: "basic", password: "pw-value-1" }, "auth.username is required"],
      [{ type: "basic", username: "a:b", password: "pw-value-1" }, "must not contain a colon"],
      [{ type: "bearer", token: "tok", username: "x" }, "auth.username does not apply"],
      [{ type: "bearer", token: "bad\ntoken" }, "printable ASCII"],
      [{ type: "oauth2", clientId: "c", clientSecret: "s" }, "auth.tokenUrl is required"],
      [
        { type: "oauth2", tokenUrl: "not a url", clientId: "c", clientSecret: "s" },
        "auth.tokenUrl",
      ],
    ];
    for (const [auth, detail] of cases) {
      const res = await d.api("POST", "/api/admin/webhooks", {
        name: "bad auth",
        url: "https://receiver.example/hook",
        secret: "0123456789abcdef",
        events: ["ADMIN_USER_DISABLED"],
        auth,
      });
      expect(res.statusCode, JSON.stringify(auth)).toBe(400);
      expect(res.json().detail).toContain(detail);
      expect(res.body).not.toContain("pw-value-1");
    }
  });
});

describe("OAuth token URL under the SSRF rules", () => {
  it("refuses an internal token URL when the endpoint is created, and one that resolves to an internal address when the token is fetched", async () => {
    const { SQLITE } = await import("../../../../helpers/dialects.js");
    const tokenServer = await startTokenServer();
    const tokenPort = new URL(tokenServer.tokenUrl).port;
    const d = await startOperatingApp(
      SQLITE,
      { webhookAllowPrivateNetworks: false },
      {
        // Both names resolve to loopback, as a rebinding or a misconfigured DNS would make them.
        lookup: (_hostname, options, callback) => {
          if ((options as { all?: boolean }).all)
            (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [
              { address: "127.0.0.1", family: 4 },
            ]);
          else (callback as (e: null, a: string, f: number) => void)(null, "127.0.0.1", 4);
        },
      },
    );
    onTestFinished(async () => {
      await d.close();
      await tokenServer.close();
    });
    const receiver = await d.receiver();

    const literal = await d.api("POST", "/api/admin/webhooks", {
      name: "metadata",
      url: `http://receiver.parley.test:${receiver.port}/hook`,
      secret: "0123456789abcdef",
      events: ["ADMIN_USER_DISABLED"],
      auth: {
        type: "oauth2",
        tokenUrl: "http://169.254.169.254/token",
        clientId: "c",
        clientSecret: "s",
      },
    });
    expect(literal.statusCode).toBe(400);
    expect(literal.json()).toMatchObject({ code: "url_host_not_allowed" });
    expect(literal.json().detail).toContain("auth.tokenUrl host is not allowed");

    const endpoint = await d.create({
      url: `http://receiver.parley.test:${receiver.port}/hook`,
      auth: {
        type: "oauth2",
        tokenUrl: `http://idp.parley.test:${tokenPort}/token`,
        clientId: "c",
        clientSecret: "ssrf-secret",
      },
    });
    const before = tokenServer.requests.length;
    await d.emitUser("ssrf");
    await expect
      .poll(
        async () => {
          const list = await d.api("GET", `/api/admin/webhooks/${endpoint.id}/deliveries`);
          const [summary] = list.json().items as Array<{ id: number; attempts: number }>;
          if (summary === undefined || summary.attempts === 0) return undefined;
          const detail = await d.api(
            "GET",
            `/api/admin/webhooks/${endpoint.id}/deliveries/${summary.id}`,
          );
          return detail.json().attemptHistory[0].error as string;
        },
        { interval: 50, timeout: 5_000 },
      )
      .toBe(
        `OAuth token request to http://idp.parley.test:${tokenPort}/token failed: target refused: address 127.0.0.1 is in a loopback range (resolved from idp.parley.test)`,
      );
    expect(tokenServer.requests.length).toBe(before);
    expect(receiver.requests).toHaveLength(0);
  });
});
