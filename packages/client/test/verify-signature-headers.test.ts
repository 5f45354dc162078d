import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import {
  ParleyError,
  signWebhookPayload,
  verifyAndParseWebhook,
  verifyParleySignature,
  verifySignatureHeaders,
  verifyWebhook,
  verifyWebhookRequest,
  verifyWebhookSignature,
  WebhookSecretError,
  type VerifySignatureHeadersOptions,
} from "../src/index.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OLD = "whsec_c2Vjb25kLXNlY3JldC1mb3Itcm90YXRpb24=";
const BODY =
  '{"event":"ADMIN_USER_DISABLED","timestamp":"2026-11-22T10:00:00.000Z","webhookId":1,"data":{"username":"u","adminActor":"admin"}}';
const NOW = Date.UTC(2026, 10, 22, 10, 0, 0);

/** Headers signed by the public library: an independent signer. */
function standardHeaders(secret: string, at = NOW, id = "evt_01KMXQ3V5G0000000000000001") {
  const signature = new Webhook(secret).sign(id, new Date(at), BODY);
  return {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at / 1000)),
    "webhook-signature": signature,
  };
}

/** verifySignatureHeaders of BODY with SECRET at NOW, `options` on top. */
function verify(
  options: Pick<VerifySignatureHeadersOptions, "headers"> & Partial<VerifySignatureHeadersOptions>,
) {
  return verifySignatureHeaders({ secret: SECRET, rawBody: BODY, now: NOW, ...options });
}

describe("verifySignatureHeaders", () => {
  it("accepts a Standard Webhooks signature made by the standardwebhooks library", () => {
    expect(verify({ headers: standardHeaders(SECRET) })).toEqual({
      ok: true,
      scheme: "standard-webhooks",
      eventId: "evt_01KMXQ3V5G0000000000000001",
      timestamp: NOW / 1000,
    });
  });

  it("accepts any secret of a list and either of two signatures (rotation)", () => {
    const headers = standardHeaders(SECRET);
    headers["webhook-signature"] += ` ${standardHeaders(OLD)["webhook-signature"]}`;
    expect(verify({ secret: [OLD], headers }).ok).toBe(true);
    expect(verify({ secret: [SECRET], headers }).ok).toBe(true);
    const other = "whsec_b3RoZXItc2VjcmV0LW5vdC10aGUtZW5kcG9pbnRz";
    expect(verify({ secret: [other], headers }).ok).toBe(false);
  });

  it("refuses a timestamp outside the tolerance (default 5 minutes) and a changed body", () => {
    const headers = standardHeaders(SECRET);
    expect(verify({ headers, now: NOW + 299_000 }).ok).toBe(true);
    expect(verify({ headers, now: NOW + 301_000 })).toEqual({
      ok: false,
      reason: "webhook-timestamp is more than 300 s from now",
    });
    expect(verify({ headers, now: NOW + 20_000, toleranceSeconds: 10 }).ok).toBe(false);
    expect(verify({ headers, rawBody: `${BODY} ` }).ok).toBe(false);
  });

  it("verifies the parley header when no Standard Webhooks headers are sent, with Fetch Headers too", () => {
    const headers = new Headers({ "X-Webhook-Signature-256": signWebhookPayload(SECRET, BODY) });
    expect(verify({ headers })).toEqual({ ok: true, scheme: "parley" });
    expect(verify({ headers: {} }).ok).toBe(false);
  });

  it("makes verifyAndParseWebhook (and so every middleware and the CLI listener) accept either scheme", () => {
    const headers = standardHeaders(SECRET, Date.now());
    const result = verifyAndParseWebhook({
      secret: SECRET,
      rawBody: BODY,
      signature: undefined,
      headers,
    });
    expect(result.ok).toBe(true);
    const wrong = verifyAndParseWebhook({
      secret: OLD,
      rawBody: BODY,
      signature: undefined,
      headers,
    });
    expect(wrong).toMatchObject({ ok: false, status: 401, code: "invalid_signature" });
  });
});

/** Standard Webhooks headers signed by hand with `key`: what a forger can make. */
function signedWith(key: Buffer, at = NOW, id = "evt_01KMXQ3V5G0000000000000009") {
  const seconds = Math.floor(at / 1000);
  const digest = createHmac("sha256", key).update(`${id}.${seconds}.${BODY}`).digest("base64");
  return {
    "webhook-id": id,
    "webhook-timestamp": String(seconds),
    "webhook-signature": `v1,${digest}`,
  };
}

describe("secrets that give no key", () => {
  it.each([
    ["not base64 at all", `whsec_${"!".repeat(32)}`],
    ["padding only", `whsec_${"=".repeat(24)}`],
    ["base64 stopped by a stray =", "whsec_=MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
    ["unpadded with stray bits (7 bytes to a lenient decoder)", "whsec_aaaaaaaaaa"],
  ])(
    "refuses a whsec_ secret that is %s, so an event forged with the key a lenient decoder reads (empty or 7 bytes) is never accepted",
    (_label, secret) => {
      const lenient = Buffer.from(secret.slice("whsec_".length), "base64");
      expect(lenient.length).toBeLessThan(8);
      const forged = signedWith(lenient);
      expect(() => verify({ secret, headers: forged })).toThrow(WebhookSecretError);
      expect(() =>
        verifyAndParseWebhook({ secret, rawBody: BODY, signature: undefined, headers: forged }),
      ).toThrow(WebhookSecretError);
    },
  );

  it("refuses keys under 16 bytes, a whsec_ one or a raw one, and an empty list, without echoing the secret", () => {
    const short = `whsec_${Buffer.from("aaaaaaa").toString("base64")}`; // a 7-byte key
    const forged = signedWith(Buffer.from("aaaaaaa"));
    expect(() => verify({ secret: short, headers: forged })).toThrow(
      /encodes a 7-byte key; a Standard Webhooks key has at least 16 bytes/,
    );
    expect(() => verify({ secret: short, headers: forged })).not.toThrow(/YWFhYWFhYQ/);
    expect(() => verify({ secret: [SECRET, "too-short"], headers: forged })).toThrow(
      "webhook secret 2 of 2 is 9 bytes; a webhook secret has at least 16",
    );
    expect(() => verifyParleySignature("", BODY, signWebhookPayload("", BODY))).toThrow(
      WebhookSecretError,
    );
    expect(() => verifyParleySignature([], BODY, "sha256=00")).toThrow(WebhookSecretError);
  });

  it("still takes base64url whsec_ secrets, as earlier versions of `parley webhooks create` generated", () => {
    const key = Buffer.from("a-32-byte-key-for-the-url-form!!");
    const secret = `whsec_${key.toString("base64url")}`;
    expect(secret).toMatch(/[-_]/);
    const headers = signedWith(key);
    expect(verify({ secret, headers }).ok).toBe(true);
  });
});

describe("the schemes a receiver accepts", () => {
  /** A `both` delivery, captured and replayed 30 days later without its `webhook-*` headers. */
  const captured = {
    ...standardHeaders(SECRET),
    "x-webhook-signature-256": signWebhookPayload(SECRET, BODY),
  };
  const replayed = { "x-webhook-signature-256": captured["x-webhook-signature-256"] };
  const later = NOW + 30 * 86_400_000;

  it('never falls back to the timestamp-less parley header with schemes: ["standard-webhooks"]', () => {
    const check = verify({ headers: replayed, now: later, schemes: ["standard-webhooks"] });
    expect(check).toEqual({
      ok: false,
      reason:
        "webhook-signature is missing, and this receiver accepts only Standard Webhooks signatures",
    });
    const parsed = verifyAndParseWebhook({
      secret: SECRET,
      rawBody: BODY,
      signature: replayed["x-webhook-signature-256"],
      headers: replayed,
      schemes: ["standard-webhooks"],
    });
    expect(parsed).toMatchObject({ ok: false, status: 401, code: "invalid_signature" });
    // The captured delivery itself is refused too: its timestamp is 30 days old.
    expect(verify({ headers: captured, now: later, schemes: ["standard-webhooks"] }).ok).toBe(
      false,
    );
  });

  it("accepts the replay by default, as documented: the parley scheme cannot be protected against it", () => {
    expect(verify({ headers: replayed, now: later })).toEqual({ ok: true, scheme: "parley" });
  });

  it('checks only X-Webhook-Signature-256 with schemes: ["parley"], whatever webhook-* headers say', () => {
    const forgedStandard = {
      ...replayed,
      ...signedWith(Buffer.from("not-the-endpoint-secret-at-all")),
    };
    expect(verify({ headers: forgedStandard, schemes: ["parley"] })).toEqual({
      ok: true,
      scheme: "parley",
    });
    expect(verify({ headers: standardHeaders(SECRET), schemes: ["parley"] })).toEqual({
      ok: false,
      reason:
        "X-Webhook-Signature-256 is missing, and this receiver accepts only the parley scheme",
    });
  });

  it("refuses an empty or unknown list of schemes", () => {
    const call = (schemes: unknown) => () =>
      verify({ headers: captured, schemes: schemes as ["parley"] });
    expect(call([])).toThrow(ParleyError);
    expect(call(["both"])).toThrow(
      'schemes may hold only "standard-webhooks", "standard-webhooks-ed25519" and "parley", not "both"',
    );
  });
});

describe("the names of 1.0", () => {
  it("are still exported, as the same functions", () => {
    expect(verifyWebhook).toBe(verifySignatureHeaders);
    expect(verifyWebhookRequest).toBe(verifyAndParseWebhook);
    expect(verifyWebhookSignature).toBe(verifyParleySignature);
  });
});
