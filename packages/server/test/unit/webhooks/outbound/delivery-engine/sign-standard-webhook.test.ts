import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import {
  signStandardWebhook,
  SigningKeyError,
  standardWebhooksKey,
} from "../../../../../src/webhooks/outbound/delivery-engine/sign-standard-webhook.js";

const BODY = Buffer.from('{"event":"WEBHOOK_TEST"}');
const ID = "evt_01KMXQ3V5G0000000000000001";
const AT = 1_795_800_000;

describe("standardWebhooksKey", () => {
  it("is the decoded bytes of a whsec_ secret, which the standardwebhooks library verifies", () => {
    const secret = `whsec_${Buffer.alloc(32, 9).toString("base64")}`;
    expect(standardWebhooksKey(secret)).toEqual(Buffer.alloc(32, 9));
    const now = Math.floor(Date.now() / 1000);
    const headers = {
      "webhook-id": ID,
      "webhook-timestamp": String(now),
      "webhook-signature": signStandardWebhook(secret, ID, now, BODY),
    };
    expect(() => new Webhook(secret).verify(BODY.toString(), headers)).not.toThrow();
  });

  it("still reads a URL-safe secret as earlier versions of the CLI and admin UI generated it", () => {
    const key = Buffer.alloc(32, 0xfb);
    expect(standardWebhooksKey(`whsec_${key.toString("base64url")}`)).toEqual(key);
  });

  it("is a raw secret's UTF-8 bytes", () => {
    expect(standardWebhooksKey("a-secret-of-my-own")).toEqual(Buffer.from("a-secret-of-my-own"));
  });

  it.each([
    ["not base64 (empty to a lenient decoder)", `whsec_${"!".repeat(32)}`],
    ["padding only", `whsec_${"=".repeat(20)}`],
    ["base64 with stray bits", "whsec_aaaaaaaaaa"],
    ["a 7-byte key", `whsec_${Buffer.from("7 bytes").toString("base64")}`],
  ])(
    "throws SigningKeyError, signing nothing, for a stored secret that is %s",
    (_label, secret) => {
      expect(() => signStandardWebhook(secret, ID, AT, BODY)).toThrow(SigningKeyError);
    },
  );
});
