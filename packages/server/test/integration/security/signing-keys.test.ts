import { createHmac } from "node:crypto";
import { verifyAndParseWebhook, verifySignatureHeaders } from "@parley/client";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, expect, it } from "vitest";
import { sealSecret } from "../../../src/config/secret-box.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { waitFor } from "../../helpers/wait-for.js";
import {
  startOperatingApp,
  type OperatingApp,
} from "../webhooks/outbound/admin-api/operating-fixture.js";

const base64Of = (bytes: number) => Buffer.alloc(bytes, 7).toString("base64");

/** `whsec_` secrets the API refuses, and why; none would be refused by a length rule alone. */
const BAD_WHSEC: Array<[string, string]> = [
  ["no base64 at all (an empty key to a lenient decoder)", `whsec_${"!".repeat(32)}`],
  ["padding only (an empty key)", `whsec_${"=".repeat(20)}`],
  ["a leading = (an empty key)", "whsec_=MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
  ["10 letters (7 bytes to a lenient decoder)", "whsec_aaaaaaaaaa"],
  ["URL-safe characters", `whsec_${Buffer.alloc(32, 0xfb).toString("base64url")}=`],
  ["missing padding", `whsec_${base64Of(32).replace(/=+$/, "")}`],
  ["stray bits in the last character", `whsec_${base64Of(32).replace(/.=$/, "B=")}`],
  ["a space inside", `whsec_${base64Of(16)} ${base64Of(15)}`],
  ["a 23-byte key", `whsec_${base64Of(23)}`],
  ["a 65-byte key", `whsec_${base64Of(65)}`],
];

describeEachDialect("signing keys and custom headers on $name", (dialect) => {
  let d: OperatingApp;
  beforeAll(async () => {
    d = await startOperatingApp(dialect);
  });
  afterAll(() => d?.close());

  const endpointBody = (extra: Record<string, unknown>) => ({
    name: "keys",
    url: "http://127.0.0.1:1/hook",
    secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    events: ["ADMIN_USER_DISABLED"],
    ...extra,
  });

  it.each(BAD_WHSEC)(
    "refuses a whsec_ secret with %s on create, PATCH and rotate-secret",
    async (_label, secret) => {
      const endpoint = await d.create({ url: "http://127.0.0.1:1/hook" });
      for (const res of [
        await d.api("POST", "/api/admin/webhooks", endpointBody({ secret })),
        await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { secret }),
        await d.api("POST", `/api/admin/webhooks/${endpoint.id}/rotate-secret`, { secret }),
      ]) {
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json()).toMatchObject({ code: "invalid_secret", field: "body.secret" });
        expect(res.body).not.toContain(secret.slice("whsec_".length, 20));
      }
    },
  );

  it("accepts whsec_ secrets of 24 and 64 bytes in strict base64, and secrets of one's own", async () => {
    for (const secret of [
      `whsec_${base64Of(24)}`,
      `whsec_${base64Of(64)}`,
      "a-secret-of-my-own-choosing",
    ]) {
      const res = await d.api("POST", "/api/admin/webhooks", endpointBody({ secret }));
      expect(res.statusCode, res.body).toBe(201);
    }
  });

  it("never signs with the empty key of a whsec_ secret stored before secrets were checked", async () => {
    const receiver = await d.receiver();
    const stored = `whsec_${"!".repeat(32)}`;
    const endpoint = await d.endpoint(receiver.url, { secret: stored });
    await d.t.ctx.db
      .updateTable("webhooks")
      .set({ signature_scheme: "standard-webhooks" })
      .where("id", "=", endpoint.id)
      .execute();
    await d.emitUser("legacy-key");
    const [delivery] = await waitFor("the delivery attempted", async () => {
      const rows = (await d.deliveries()).filter((row) => row.webhook_id === endpoint.id);
      return rows.length > 0 && rows[0]!.attempts > 0 ? rows : undefined;
    });
    const [attempt] = await d.attempts(delivery!.id);
    expect(attempt!.error).toMatch(/secret is not base64, so it gives no Standard Webhooks key/);
    // Nothing went out, so nothing signed with the empty key can be captured.
    expect(receiver.requests).toEqual([]);
  });

  it("leaves out a hop-by-hop or credential header stored before it was reserved, and sends the others", async () => {
    const receiver = await d.receiver();
    const endpoint = await d.endpoint(receiver.url);
    const stored = { expect: "100-continue", cookie: "session=1", "x-team": "parley" };
    await d.t.ctx.db
      .updateTable("webhooks")
      .set({ headers_ciphertext: sealSecret(d.t.ctx.keys.secretKey, JSON.stringify(stored)) })
      .where("id", "=", endpoint.id)
      .execute();
    await d.emitUser("legacy-headers");
    const [request] = await receiver.waitForRequests(1);
    expect(request!.headers["x-team"]).toBe("parley");
    expect(request!.headers.expect).toBeUndefined();
    expect(request!.headers.cookie).toBeUndefined();
    const [delivery] = await waitFor("the delivery recorded", async () => {
      const rows = (await d.deliveries()).filter((row) => row.webhook_id === endpoint.id);
      return rows[0]?.status === "SUCCESS" ? rows : undefined;
    });
    expect(delivery!.status).toBe("SUCCESS");
  });

  it.each([
    "Connection",
    "Keep-Alive",
    "Proxy-Connection",
    "TE",
    "Trailer",
    "Transfer-Encoding",
    "Upgrade",
    "Expect",
    "Host",
    "Content-Length",
    "Proxy-Authorization",
    "cookie",
  ])("refuses the custom header %s on create and PATCH", async (name) => {
    const endpoint = await d.create({ url: "http://127.0.0.1:1/hook" });
    for (const res of [
      await d.api(
        "POST",
        "/api/admin/webhooks",
        endpointBody({ headers: { [name]: "100-continue" } }),
      ),
      await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { headers: { [name]: "v" } }),
    ]) {
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ code: "header_reserved", header: name });
    }
  });

  it("a receiver that accepts only Standard Webhooks refuses a both delivery replayed without its webhook-* headers", async () => {
    const receiver = await d.receiver();
    const secret = `whsec_${base64Of(32)}`;
    await d.create({ url: receiver.url, secret, signatureScheme: "both" });
    await d.emitUser("replayed");
    const [captured] = await receiver.waitForRequests(1);
    const headers = captured!.headers as Record<string, string>;
    expect(() => new Webhook(secret).verify(captured!.body, headers)).not.toThrow();

    const replayed = Object.fromEntries(
      Object.entries(headers).filter(([name]) => !name.startsWith("webhook-")),
    );
    const thirtyDaysLater = Date.now() + 30 * 86_400_000;
    const strict = { secret, rawBody: captured!.body, schemes: ["standard-webhooks"] as const };
    expect(verifySignatureHeaders({ ...strict, headers: replayed, now: thirtyDaysLater }).ok).toBe(
      false,
    );
    expect(verifySignatureHeaders({ ...strict, headers, now: thirtyDaysLater }).ok).toBe(false);
    expect(
      verifyAndParseWebhook({
        ...strict,
        signature: replayed["x-webhook-signature-256"],
        headers: replayed,
      }),
    ).toMatchObject({ ok: false, status: 401 });
    // The parley header alone still verifies: that scheme has no timestamp (docs/security.md).
    const parley = `sha256=${createHmac("sha256", secret).update(captured!.body).digest("hex")}`;
    expect(replayed["x-webhook-signature-256"]).toBe(parley);
  });
});
