import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { waitFor } from "../../../../helpers/wait-for.js";
import { expectedSignature } from "../delivery-engine/delivery-fixture.js";
import { startOperatingApp, type OperatingApp } from "./operating-fixture.js";

const WHSEC = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const RAW = "plain-secret-of-some-length";
/** The headers of docs/webhooks.md, "The request": all the `parley` scheme sends. */
const PARLEY_HEADERS = [
  "connection",
  "content-length",
  "content-type",
  "host",
  "user-agent",
  "x-webhook-signature-256",
];
const STANDARD_HEADERS = ["webhook-id", "webhook-signature", "webhook-timestamp"];

describeEachDialect("signature schemes and event ids on $name", (dialect) => {
  let d: OperatingApp;
  beforeAll(async () => {
    d = await startOperatingApp(dialect);
  });
  afterAll(() => d?.close());

  it("sends exactly the documented headers to an endpoint created without any operating field", async () => {
    const receiver = await d.receiver();
    const endpoint = await d.create({ url: receiver.url, secret: WHSEC });
    expect(endpoint.signatureScheme).toBe("parley");
    await d.emitUser("parley-only");
    const [request] = await receiver.waitForRequests(1);
    expect(Object.keys(request!.headers).sort()).toEqual(PARLEY_HEADERS);
    expect(request!.headers["x-webhook-signature-256"]).toBe(
      expectedSignature(WHSEC, request!.body),
    );
  });

  it("signs a standard-webhooks endpoint so the standardwebhooks library verifies it, whsec_ and raw secrets alike", async () => {
    for (const secret of [WHSEC, RAW]) {
      const receiver = await d.receiver();
      await d.create({ url: receiver.url, secret, signatureScheme: "standard-webhooks" });
      await d.emitUser(`standard-${secret.length}`);
      const [request] = await receiver.waitForRequests(1);
      expect(Object.keys(request!.headers).sort()).toEqual(
        [
          ...PARLEY_HEADERS.filter((h) => h !== "x-webhook-signature-256"),
          ...STANDARD_HEADERS,
        ].sort(),
      );
      expect(request!.headers["webhook-id"]).toMatch(/^evt_[0-9A-Z]{26}$/);
      expect(Number(request!.headers["webhook-timestamp"])).toBeCloseTo(Date.now() / 1000, -1);
      const verifier = secret.startsWith("whsec_")
        ? new Webhook(secret)
        : new Webhook(secret, { format: "raw" });
      expect(verifier.verify(request!.body, request!.headers)).toMatchObject({
        event: "ADMIN_USER_DISABLED",
      });
      // A tampered body fails the same check.
      expect(() => verifier.verify(Buffer.from("{}"), request!.headers)).toThrow();
    }
  });

  it("sends both sets with scheme both; the parley header signs with the whole secret string", async () => {
    const receiver = await d.receiver();
    await d.create({ url: receiver.url, secret: WHSEC, signatureScheme: "both" });
    await d.emitUser("both");
    const [request] = await receiver.waitForRequests(1);
    expect(Object.keys(request!.headers).sort()).toEqual(
      [...PARLEY_HEADERS, ...STANDARD_HEADERS].sort(),
    );
    expect(request!.headers["x-webhook-signature-256"]).toBe(
      expectedSignature(WHSEC, request!.body),
    );
    expect(() => new Webhook(WHSEC).verify(request!.body, request!.headers)).not.toThrow();
  });

  it("keeps one event id per delivery across retries and redelivery, shown in the API and the log", async () => {
    const receiver = await d.receiver();
    receiver.respondWith((_req, i) => ({ status: i === 0 ? 503 : 200 }));
    const endpoint = await d.create({ url: receiver.url, signatureScheme: "standard-webhooks" });
    await d.emitUser("retried");
    const [first, second] = await receiver.waitForRequests(2);
    expect(second!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
    expect(second!.body.equals(first!.body)).toBe(true);

    const list = await d.api("GET", `/api/admin/webhooks/${endpoint.id}/deliveries`);
    const [summary] = list.json().items as Array<{ id: number; eventId: string; status: string }>;
    expect(summary!.eventId).toBe(first!.headers["webhook-id"]);
    await waitFor("SUCCESS", async () => {
      const res = await d.api(
        "GET",
        `/api/admin/webhooks/${endpoint.id}/deliveries/${summary!.id}`,
      );
      return res.json().status === "SUCCESS" ? res.json() : undefined;
    });
    const detail = (
      await d.api("GET", `/api/admin/webhooks/${endpoint.id}/deliveries/${summary!.id}`)
    ).json();
    expect(detail.eventId).toBe(summary!.eventId);
    expect(detail.attemptHistory[0].requestHeaders["webhook-id"]).toBe(summary!.eventId);

    const again = await d.api(
      "POST",
      `/api/admin/webhooks/${endpoint.id}/deliveries/${summary!.id}/redeliver`,
    );
    expect(again.statusCode).toBe(202);
    const [, , third] = await receiver.waitForRequests(3);
    expect(third!.headers["webhook-id"]).toBe(summary!.eventId);
    const copy = await d.api(
      "GET",
      `/api/admin/webhooks/${endpoint.id}/deliveries/${again.json().deliveryId}`,
    );
    expect(copy.json().eventId).toBe(summary!.eventId);
  });

  it("gives each endpoint of one event its own event id", async () => {
    const a = await d.receiver();
    const b = await d.receiver();
    await d.create({ url: a.url, signatureScheme: "both" });
    await d.create({ url: b.url, signatureScheme: "both" });
    await d.emitUser("fan-out");
    const [fromA] = await a.waitForRequests(1);
    const [fromB] = await b.waitForRequests(1);
    expect(fromA!.headers["webhook-id"]).not.toBe(fromB!.headers["webhook-id"]);
    // One event: the same prefix; the endpoint's part differs.
    expect(fromA!.headers["webhook-id"]!.slice(0, 20)).toBe(
      fromB!.headers["webhook-id"]!.slice(0, 20),
    );
  });

  it("records the request headers as sent and the response headers as received, credentials masked", async () => {
    const receiver = await d.receiver();
    receiver.respondWith(() => ({
      status: 200,
      headers: {
        "x-receiver": "r".repeat(300),
        "x-request-id": "req-81723",
        "set-cookie": "session=sess_9f8e7d6c5b4a; Path=/; HttpOnly",
        "x-api-key": "rk_live_0123456789abcdef",
        "x-auth-token": "eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl",
      },
    }));
    const endpoint = await d.create({
      url: receiver.url,
      signatureScheme: "both",
      headers: { Authorization: "Bearer sk_live_abcdef1234" },
    });
    await d.emitUser("headers-logged");
    const [request] = await receiver.waitForRequests(1);
    const [summary] = (await d.api("GET", `/api/admin/webhooks/${endpoint.id}/deliveries`)).json()
      .items as Array<{ id: number }>;
    type Headers = Record<string, string>;
    type Detail = { attemptHistory: Array<{ requestHeaders: Headers; responseHeaders: Headers }> };
    const detail = await waitFor<Detail>("an attempt", async () => {
      const res = await d.api(
        "GET",
        `/api/admin/webhooks/${endpoint.id}/deliveries/${summary!.id}`,
      );
      return res.json().attemptHistory.length > 0 ? res.json() : undefined;
    });
    const attempt = detail.attemptHistory[0]!;
    // A signature with the body is a delivery anyone could replay: only its scheme is kept.
    expect(attempt.requestHeaders).toMatchObject({
      "content-type": "application/json",
      "user-agent": "Parley-Webhooks/1.0",
      "x-webhook-signature-256": "sha256=****",
      "webhook-id": request!.headers["webhook-id"],
      "webhook-timestamp": request!.headers["webhook-timestamp"],
      "webhook-signature": "v1,****",
      // The custom header's value is a credential: the log keeps it masked.
      authorization: "****1234",
    });
    expect(request!.headers["x-webhook-signature-256"]).toBe(
      expectedSignature(WHSEC, request!.body),
    );
    expect(request!.headers.authorization).toBe("Bearer sk_live_abcdef1234");
    // The receiver's credentials are masked whole; its other headers are kept.
    expect(attempt.responseHeaders).toMatchObject({
      "set-cookie": "****",
      "x-api-key": "****",
      "x-auth-token": "****",
      "x-request-id": "req-81723",
    });
    expect(attempt.responseHeaders["x-receiver"]).toHaveLength(256);
    expect(Object.keys(attempt.responseHeaders).length).toBeLessThanOrEqual(20);

    // Masked where the attempt is recorded: the database holds none of them either.
    const stored = JSON.stringify(
      await d.t.ctx.db
        .selectFrom("webhook_attempts")
        .selectAll()
        .where("webhook_id", "=", endpoint.id)
        .execute(),
    );
    const signature = request!.headers["webhook-signature"]!.slice("v1,".length);
    for (const secret of [
      request!.headers["x-webhook-signature-256"]!.slice("sha256=".length),
      signature,
      "sess_9f8e7d6c5b4a",
      "rk_live_0123456789abcdef",
      "c2lnbmF0dXJl",
      "sk_live",
    ])
      expect(stored).not.toContain(secret);
  });

  it("shows attempts recorded before signatures were masked with their signatures masked", async () => {
    const receiver = await d.receiver();
    const endpoint = await d.create({ url: receiver.url, signatureScheme: "both" });
    await d.emitUser("recorded-before");
    await receiver.waitForRequests(1);
    const [summary] = (await d.api("GET", `/api/admin/webhooks/${endpoint.id}/deliveries`)).json()
      .items as Array<{ id: number }>;
    await waitFor("an attempt", async () => {
      const res = await d.api(
        "GET",
        `/api/admin/webhooks/${endpoint.id}/deliveries/${summary!.id}`,
      );
      return res.json().attemptHistory.length > 0 ? true : undefined;
    });
    // As an earlier version recorded them: full signatures, the receiver's cookie as sent.
    await d.t.ctx.db
      .updateTable("webhook_attempts")
      .set({
        request_headers: JSON.stringify({
          "x-webhook-signature-256": `sha256=${"ab".repeat(32)}`,
          "webhook-signature": "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4= v1,b2xkc2VjcmV0",
        }),
        response_headers: JSON.stringify({
          "set-cookie": "session=abc",
          "content-type": "text/plain",
        }),
      })
      .where("delivery_id", "=", summary!.id)
      .execute();
    const detail = (
      await d.api("GET", `/api/admin/webhooks/${endpoint.id}/deliveries/${summary!.id}`)
    ).json();
    expect(detail.attemptHistory[0].requestHeaders).toEqual({
      "x-webhook-signature-256": "sha256=****",
      "webhook-signature": "v1,**** v1,****",
    });
    expect(detail.attemptHistory[0].responseHeaders).toEqual({
      "set-cookie": "****",
      "content-type": "text/plain",
    });
  });
});
