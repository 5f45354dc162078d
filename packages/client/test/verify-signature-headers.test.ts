import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import {
  signWebhookPayload,
  verifyAndParseWebhook,
  verifyParleySignature,
  verifySignatureHeaders,
  verifyWebhook,
  verifyWebhookRequest,
  verifyWebhookSignature,
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

describe("verifySignatureHeaders", () => {
  it("accepts a Standard Webhooks signature made by the standardwebhooks library", () => {
    expect(
      verifySignatureHeaders({
        secret: SECRET,
        rawBody: BODY,
        headers: standardHeaders(SECRET),
        now: NOW,
      }),
    ).toEqual({
      ok: true,
      scheme: "standard-webhooks",
      eventId: "evt_01KMXQ3V5G0000000000000001",
      timestamp: NOW / 1000,
    });
  });

  it("accepts any secret of a list and either of two signatures (rotation)", () => {
    const headers = standardHeaders(SECRET);
    headers["webhook-signature"] += ` ${standardHeaders(OLD)["webhook-signature"]}`;
    expect(verifySignatureHeaders({ secret: [OLD], rawBody: BODY, headers, now: NOW }).ok).toBe(
      true,
    );
    expect(verifySignatureHeaders({ secret: [SECRET], rawBody: BODY, headers, now: NOW }).ok).toBe(
      true,
    );
    expect(
      verifySignatureHeaders({ secret: ["whsec_AAAA"], rawBody: BODY, headers, now: NOW }).ok,
    ).toBe(false);
  });

  it("refuses a timestamp outside the tolerance (default 5 minutes) and a changed body", () => {
    const headers = standardHeaders(SECRET);
    expect(
      verifySignatureHeaders({ secret: SECRET, rawBody: BODY, headers, now: NOW + 299_000 }).ok,
    ).toBe(true);
    expect(
      verifySignatureHeaders({ secret: SECRET, rawBody: BODY, headers, now: NOW + 301_000 }),
    ).toEqual({
      ok: false,
      reason: "webhook-timestamp is more than 300 s from now",
    });
    expect(
      verifySignatureHeaders({
        secret: SECRET,
        rawBody: BODY,
        headers,
        now: NOW + 20_000,
        toleranceSeconds: 10,
      }).ok,
    ).toBe(false);
    expect(
      verifySignatureHeaders({ secret: SECRET, rawBody: `${BODY} `, headers, now: NOW }).ok,
    ).toBe(false);
  });

  it("verifies the parley header when no Standard Webhooks headers are sent, with Fetch Headers too", () => {
    const headers = new Headers({ "X-Webhook-Signature-256": signWebhookPayload(SECRET, BODY) });
    expect(verifySignatureHeaders({ secret: SECRET, rawBody: BODY, headers })).toEqual({
      ok: true,
      scheme: "parley",
    });
    expect(verifySignatureHeaders({ secret: SECRET, rawBody: BODY, headers: {} }).ok).toBe(false);
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

describe("the names of 1.0", () => {
  it("are still exported, as the same functions", () => {
    expect(verifyWebhook).toBe(verifySignatureHeaders);
    expect(verifyWebhookRequest).toBe(verifyAndParseWebhook);
    expect(verifyWebhookSignature).toBe(verifyParleySignature);
  });
});
