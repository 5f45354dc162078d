import { createPublicKey, verify } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { HTTP } from "cloudevents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSecret } from "../../../../../src/config/secret-box.js";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { waitFor } from "../../../../helpers/wait-for.js";
import { startOperatingApp, type OperatingApp } from "./operating-fixture.js";

const ED25519 = "standard-webhooks-ed25519";
/** What an ed25519 endpoint sends: no X-Webhook-Signature-256. */
const HEADERS = [
  "connection",
  "content-length",
  "content-type",
  "host",
  "user-agent",
  "webhook-id",
  "webhook-signature",
  "webhook-timestamp",
];

/** The 32 raw bytes of a `whpk_` public key, checked as such. */
function rawPublicKey(whpk: string): Buffer {
  expect(whpk).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
  const raw = Buffer.from(whpk.slice("whpk_".length), "base64");
  expect(raw).toHaveLength(32);
  return raw;
}

/**
 * A receiver's check, with node:crypto alone: which `v1a` entries of `webhook-signature` are an
 * ed25519 signature of "<webhook-id>.<webhook-timestamp>.<body>" under the public key.
 */
function v1aVerifies(
  whpk: string,
  headers: Record<string, string | undefined>,
  body: Buffer,
): boolean[] {
  const key = createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: rawPublicKey(whpk).toString("base64url") },
    format: "jwk",
  });
  const signed = Buffer.concat([
    Buffer.from(`${headers["webhook-id"]}.${headers["webhook-timestamp"]}.`),
    body,
  ]);
  return headers["webhook-signature"]!.split(" ").map((entry) => {
    expect(entry).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    return verify(null, signed, key, Buffer.from(entry.slice(4), "base64"));
  });
}

describeEachDialect("ed25519 signatures (standard-webhooks-ed25519) on $name", (dialect) => {
  let d: OperatingApp;
  beforeAll(async () => {
    d = await startOperatingApp(dialect);
  });
  afterAll(() => d?.close());

  it("creates an endpoint without a secret, shows its public key, and signs v1a so node:crypto verifies it", async () => {
    const receiver = await d.receiver();
    const endpoint = await d.create({
      url: receiver.url,
      signatureScheme: ED25519,
      secret: undefined,
    });
    expect(endpoint.signatureScheme).toBe(ED25519);
    rawPublicKey(endpoint.publicKey!);
    await d.emitUser("signed-ed25519");
    const [request] = await receiver.waitForRequests(1);
    expect(Object.keys(request!.headers).sort()).toEqual(HEADERS);
    expect(request!.headers["webhook-id"]).toMatch(/^evt_[0-9A-Z]{26}$/);
    expect(Number(request!.headers["webhook-timestamp"])).toBeCloseTo(Date.now() / 1000, -1);
    expect(v1aVerifies(endpoint.publicKey!, request!.headers, request!.body)).toEqual([true]);
    // A changed body, id or timestamp does not verify.
    expect(v1aVerifies(endpoint.publicKey!, request!.headers, Buffer.from("{}"))).toEqual([false]);
    expect(
      v1aVerifies(
        endpoint.publicKey!,
        {
          ...request!.headers,
          "webhook-timestamp": String(Number(request!.headers["webhook-timestamp"]) + 1),
        },
        request!.body,
      ),
    ).toEqual([false]);
    // Another endpoint has another key pair.
    const other = await d.create({ url: receiver.url, signatureScheme: ED25519 });
    expect(other.publicKey).not.toBe(endpoint.publicKey);
    expect(v1aVerifies(other.publicKey!, request!.headers, request!.body)).toEqual([false]);
  });

  it("signs the bytes sent in both CloudEvents formats", async () => {
    for (const payloadFormat of ["cloudevents", "cloudevents-binary"] as const) {
      const receiver = await d.receiver();
      const endpoint = await d.create({
        url: receiver.url,
        signatureScheme: ED25519,
        payloadFormat,
      });
      await d.emitUser(`ce-${payloadFormat}`);
      const [request] = await receiver.waitForRequests(1);
      expect(v1aVerifies(endpoint.publicKey!, request!.headers, request!.body)).toEqual([true]);
      const event = HTTP.toEvent({ headers: request!.headers, body: request!.body.toString() });
      expect(Array.isArray(event) ? event[0]!.type : event.type).toBe(
        "io.parley.ADMIN_USER_DISABLED",
      );
    }
  });

  it("keeps the private key sealed at rest and out of every answer; the public key matches it", async () => {
    const endpoint = await d.create({ url: "https://example.com/hook", signatureScheme: ED25519 });
    const row = await d.t.ctx.db
      .selectFrom("webhooks")
      .select(["signing_key_ciphertext", "public_key"])
      .where("id", "=", endpoint.id)
      .executeTakeFirstOrThrow();
    const pkcs8 = openSecret(d.t.ctx.keys.secretKey, row.signing_key_ciphertext!);
    const der = Buffer.from(pkcs8, "base64");
    // The stored value is not the key in any readable form.
    expect(row.signing_key_ciphertext).not.toContain(pkcs8);
    expect(Buffer.from(row.signing_key_ciphertext!, "base64").includes(der.subarray(-32))).toBe(
      false,
    );
    expect(row.public_key).toBe(endpoint.publicKey);
    const one = await d.api("GET", `/api/admin/webhooks/${endpoint.id}`);
    const list = await d.api("GET", "/api/admin/webhooks?limit=200");
    for (const text of [one.body, list.body]) {
      expect(text).not.toContain(pkcs8);
      expect(text).not.toContain(der.subarray(-32).toString("base64"));
    }
  });

  it("makes the key pair on the first switch to ed25519, keeps it on a switch back, and signs HMAC again meanwhile", async () => {
    const receiver = await d.receiver();
    const endpoint = await d.create({ url: receiver.url, signatureScheme: "standard-webhooks" });
    expect(endpoint.publicKey).toBeNull();
    const switched = (
      await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { signatureScheme: ED25519 })
    ).json();
    rawPublicKey(switched.publicKey);
    const back = (
      await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { signatureScheme: "both" })
    ).json();
    expect(back.publicKey).toBe(switched.publicKey);
    await d.emitUser("switched-back");
    const [request] = await receiver.waitForRequests(1);
    expect(request!.headers["webhook-signature"]).toMatch(/^v1,/);
    expect(request!.headers["x-webhook-signature-256"]).toMatch(/^sha256=/);
    const again = (
      await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { signatureScheme: ED25519 })
    ).json();
    expect(again.publicKey).toBe(switched.publicKey);
  });

  it("refuses an endpoint of an HMAC scheme without a secret", async () => {
    const res = await d.api("POST", "/api/admin/webhooks", {
      name: "no secret",
      url: "https://example.com/hook",
      events: ["ADMIN_USER_DISABLED"],
    });
    expect(res.statusCode).toBe(400);
    // A missing required field, as every other one: validation_failed, naming the field.
    expect(res.json()).toMatchObject({ code: "validation_failed", field: "body.secret" });
  });

  describe("rotation", () => {
    it("sends both signatures during the overlap, new first, then the new one only", async () => {
      const receiver = await d.receiver();
      const endpoint = await d.create({ url: receiver.url, signatureScheme: ED25519 });
      const res = await d.api("POST", `/api/admin/webhooks/${endpoint.id}/rotate-secret`, {
        overlapSeconds: 1,
      });
      expect(res.statusCode).toBe(200);
      const { publicKey, previousKeyExpiresAt, ...rest } = res.json();
      expect(rest).toEqual({});
      rawPublicKey(publicKey);
      expect(publicKey).not.toBe(endpoint.publicKey);
      expect(Date.parse(previousKeyExpiresAt) - Date.now()).toBeGreaterThan(500);
      const shown = (await d.api("GET", `/api/admin/webhooks/${endpoint.id}`)).json();
      expect(shown.publicKey).toBe(publicKey);

      await d.emitUser("during-key-overlap");
      const [during] = await receiver.waitForRequests(1);
      expect(v1aVerifies(publicKey, during!.headers, during!.body)).toEqual([true, false]);
      expect(v1aVerifies(endpoint.publicKey!, during!.headers, during!.body)).toEqual([
        false,
        true,
      ]);

      await sleep(1_100);
      await d.emitUser("after-key-overlap");
      const [, after] = await receiver.waitForRequests(2);
      expect(v1aVerifies(publicKey, after!.headers, after!.body)).toEqual([true]);
      await waitFor("the old private key deleted", async () => {
        const row = await d.t.ctx.db
          .selectFrom("webhooks")
          .select(["previous_signing_key_ciphertext", "previous_signing_key_expires_at"])
          .where("id", "=", endpoint.id)
          .executeTakeFirstOrThrow();
        return (
          row.previous_signing_key_ciphertext === null &&
          row.previous_signing_key_expires_at === null
        );
      });
    });

    it("drops the old key at once with overlapSeconds 0 and refuses a given secret", async () => {
      const receiver = await d.receiver();
      const endpoint = await d.create({ url: receiver.url, signatureScheme: ED25519 });
      const res = await d.api("POST", `/api/admin/webhooks/${endpoint.id}/rotate-secret`, {
        overlapSeconds: 0,
      });
      expect(res.json()).toEqual({ publicKey: expect.any(String), previousKeyExpiresAt: null });
      await d.emitUser("no-key-overlap");
      const [request] = await receiver.waitForRequests(1);
      expect(v1aVerifies(res.json().publicKey, request!.headers, request!.body)).toEqual([true]);
      const given = await d.api("POST", `/api/admin/webhooks/${endpoint.id}/rotate-secret`, {
        secret: "a-brand-new-secret-value",
      });
      expect(given.statusCode).toBe(400);
      expect(given.json().code).toBe("key_pair_generated");
      const unchanged = (await d.api("GET", `/api/admin/webhooks/${endpoint.id}`)).json();
      expect(unchanged.publicKey).toBe(res.json().publicKey);
    });
  });
});
