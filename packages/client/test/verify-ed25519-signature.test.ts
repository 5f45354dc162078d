import { createHmac, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  createWebhookHandler,
  verifyAndParseWebhook,
  verifySignatureHeaders,
  WebhookSecretError,
  type VerifySignatureHeadersOptions,
} from "../src/index.js";

const BODY =
  '{"event":"ADMIN_USER_DISABLED","timestamp":"2026-11-22T10:00:00.000Z","webhookId":1,"data":{"username":"u","adminActor":"admin"}}';
const NOW = Date.UTC(2026, 10, 22, 10, 0, 0);
const ID = "evt_01KMXQ3V5G0000000000000001";
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/** A key pair as an endpoint has one: the private half, and the public one as `whpk_`. */
function keyPair(): { privateKey: KeyObject; whpk: string } {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const raw = Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url");
  return { privateKey, whpk: `whpk_${raw.toString("base64")}` };
}

/** `v1a,<base64>`: signed with node:crypto, independently of the code under test. */
function v1a(privateKey: KeyObject, at = NOW, body = BODY): string {
  const signed = `${ID}.${Math.floor(at / 1000)}.${body}`;
  return `v1a,${sign(null, Buffer.from(signed), privateKey).toString("base64")}`;
}

function headers(signature: string, at = NOW) {
  return {
    "webhook-id": ID,
    "webhook-timestamp": String(Math.floor(at / 1000)),
    "webhook-signature": signature,
  };
}

function check(
  options: Omit<Partial<VerifySignatureHeadersOptions>, "rawBody" | "now"> & {
    headers: VerifySignatureHeadersOptions["headers"];
  },
) {
  return verifySignatureHeaders({ rawBody: BODY, now: NOW, ...options });
}

const current = keyPair();
const previous = keyPair();

describe("v1a (standard-webhooks-ed25519) with a public key", () => {
  it("accepts an ed25519 signature under the public key alone, and says so", () => {
    expect(check({ publicKey: current.whpk, headers: headers(v1a(current.privateKey)) })).toEqual({
      ok: true,
      scheme: "standard-webhooks-ed25519",
      eventId: ID,
      timestamp: NOW / 1000,
    });
  });

  it("accepts either entry during a rotation, with one key or a list of both", () => {
    const both = headers(`${v1a(current.privateKey)} ${v1a(previous.privateKey)}`);
    expect(check({ publicKey: current.whpk, headers: both }).ok).toBe(true);
    expect(check({ publicKey: previous.whpk, headers: both }).ok).toBe(true);
    expect(
      check({ publicKey: [previous.whpk, current.whpk], headers: headers(v1a(current.privateKey)) })
        .ok,
    ).toBe(true);
    expect(check({ publicKey: keyPair().whpk, headers: both })).toEqual({
      ok: false,
      reason: "webhook-signature does not match the body",
    });
  });

  it("refuses a changed body, a timestamp outside the tolerance, and another key's signature", () => {
    const signed = headers(v1a(current.privateKey));
    expect(
      verifySignatureHeaders({
        publicKey: current.whpk,
        headers: signed,
        rawBody: `${BODY} `,
        now: NOW,
      }).ok,
    ).toBe(false);
    const old = NOW - 301_000;
    expect(
      check({ publicKey: current.whpk, headers: headers(v1a(current.privateKey, old), old) }),
    ).toEqual({
      ok: false,
      reason: "webhook-timestamp is more than 300 s from now",
    });
    expect(check({ publicKey: current.whpk, headers: headers(v1a(previous.privateKey)) }).ok).toBe(
      false,
    );
  });

  it("never takes an HMAC v1 entry, nor the parley header, for a receiver given only a public key", () => {
    const hmac = createHmac("sha256", Buffer.from(SECRET.slice(6), "base64"))
      .update(`${ID}.${NOW / 1000}.${BODY}`)
      .digest("base64");
    expect(check({ publicKey: current.whpk, headers: headers(`v1,${hmac}`) }).ok).toBe(false);
    const parley = `sha256=${createHmac("sha256", SECRET).update(BODY).digest("hex")}`;
    expect(
      check({ publicKey: current.whpk, headers: { "x-webhook-signature-256": parley } }),
    ).toEqual({
      ok: false,
      reason:
        "webhook-signature is missing, and this receiver accepts only Standard Webhooks signatures",
    });
    // Given both a secret and a public key, either scheme passes.
    expect(
      check({ secret: SECRET, publicKey: current.whpk, headers: headers(`v1,${hmac}`) }),
    ).toMatchObject({
      ok: true,
      scheme: "standard-webhooks",
    });
    expect(
      check({ secret: SECRET, publicKey: current.whpk, headers: headers(v1a(current.privateKey)) }),
    ).toMatchObject({ ok: true, scheme: "standard-webhooks-ed25519" });
  });

  it("throws WebhookSecretError for a key that is no whpk_ ed25519 key, and for no key at all", () => {
    const signed = headers(v1a(current.privateKey));
    for (const bad of [
      "",
      "whpk_",
      current.whpk.slice(0, -4),
      `whsk_${current.whpk.slice(5)}`,
      "whpk_!!!!",
    ])
      expect(() => check({ publicKey: bad, headers: signed })).toThrow(WebhookSecretError);
    expect(() => check({ publicKey: [], headers: signed })).toThrow(WebhookSecretError);
    expect(() => check({ headers: signed })).toThrow(WebhookSecretError);
  });

  it("makes verifyAndParseWebhook and the Node handler accept v1a with publicKey", () => {
    const at = Date.now();
    const parsed = verifyAndParseWebhook({
      publicKey: current.whpk,
      rawBody: BODY,
      signature: undefined,
      headers: headers(v1a(current.privateKey, at), at),
    });
    expect(parsed).toMatchObject({ ok: true, event: { event: "ADMIN_USER_DISABLED" } });
    const forged = verifyAndParseWebhook({
      publicKey: current.whpk,
      rawBody: BODY,
      signature: undefined,
      headers: headers(v1a(previous.privateKey, at), at),
    });
    expect(forged).toMatchObject({ ok: false, status: 401, code: "invalid_signature" });
    expect(() =>
      createWebhookHandler({ publicKey: "whpk_nope", onEvent: () => undefined }),
    ).toThrow(WebhookSecretError);
  });
});
