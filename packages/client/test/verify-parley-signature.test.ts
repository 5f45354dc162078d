import { createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { signWebhookPayload, verifyParleySignature, WebhookSecretError } from "../src/index.js";

// Made independently of the library: node:crypto's HMAC over the exact bytes, UTF-8 key.
const SECRET = "whsec_independent_vector_0001";
const BODY =
  '{"event":"USER_JOINED_ROOM","timestamp":"2026-11-22T10:00:00.000Z","webhookId":3,"data":{"roomId":9,"username":"zoë"}}';
const HEADER = `sha256=${createHmac("sha256", Buffer.from(SECRET, "utf8")).update(Buffer.from(BODY, "utf8")).digest("hex")}`;

describe("verifyParleySignature", () => {
  it("accepts the node:crypto vector for the body as a string, Buffer, Uint8Array and ArrayBuffer", () => {
    const bytes = Buffer.from(BODY, "utf8");
    expect(verifyParleySignature(SECRET, BODY, HEADER)).toBe(true);
    expect(verifyParleySignature(SECRET, bytes, HEADER)).toBe(true);
    expect(verifyParleySignature(SECRET, new Uint8Array(bytes), HEADER)).toBe(true);
    const arrayBuffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
    expect(verifyParleySignature(SECRET, arrayBuffer, HEADER)).toBe(true);
  });

  it("signs exactly as the vector does", () => {
    expect(signWebhookPayload(SECRET, BODY)).toBe(HEADER);
  });

  it("rejects a wrong secret, a changed body and a re-serialised body", () => {
    expect(verifyParleySignature("whsec_independent_vector_0002", BODY, HEADER)).toBe(false);
    expect(verifyParleySignature(SECRET, BODY.replace("9", "8"), HEADER)).toBe(false);
    const reserialised = JSON.stringify(JSON.parse(BODY), null, 2);
    expect(verifyParleySignature(SECRET, reserialised, HEADER)).toBe(false);
  });

  it.each([
    ["missing", undefined],
    ["null", null],
    ["empty", ""],
    ["without the sha256= prefix", HEADER.slice("sha256=".length)],
    ["with another algorithm", HEADER.replace("sha256=", "sha1=")],
    ["too short", HEADER.slice(0, -2)],
    ["too long", `${HEADER}00`],
    ["with non-hex characters", `${HEADER.slice(0, -1)}g`],
    ["with a hex digit too few and a space", `${HEADER.slice(0, -1)} `],
    ["repeated (an array)", [HEADER, HEADER]],
  ])("answers false, without throwing, for a header %s", (_label, header) => {
    expect(verifyParleySignature(SECRET, BODY, header)).toBe(false);
  });

  it("accepts any of several secrets (rotation) and rejects when none matches", () => {
    expect(verifyParleySignature(["old-secret-0000000000", SECRET], BODY, HEADER)).toBe(true);
    expect(
      verifyParleySignature(["a-secret-00000000000", "b-secret-0000000000"], BODY, HEADER),
    ).toBe(false);
  });

  it("throws for a secret under 16 bytes or none, never verifying with such a key", () => {
    expect(() => verifyParleySignature([], BODY, HEADER)).toThrow(WebhookSecretError);
    expect(() => verifyParleySignature("", BODY, signWebhookPayload("", BODY))).toThrow(
      "the webhook secret is empty; a webhook secret has at least 16",
    );
    expect(() => verifyParleySignature("Jefe", BODY, signWebhookPayload("Jefe", BODY))).toThrow(
      "the webhook secret is 4 bytes",
    );
  });

  it("accepts upper-case hex digits of the right signature", () => {
    expect(verifyParleySignature(SECRET, BODY, `sha256=${HEADER.slice(7).toUpperCase()}`)).toBe(
      true,
    );
  });

  it("round-trips any secret and body, and rejects any other body", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 16 }),
        fc.uint8Array(),
        fc.uint8Array(),
        (secret, body, other) => {
          const header = signWebhookPayload(secret, body);
          expect(verifyParleySignature(secret, body, header)).toBe(true);
          const same = Buffer.compare(Buffer.from(body), Buffer.from(other)) === 0;
          expect(verifyParleySignature(secret, other, header)).toBe(same);
        },
      ),
    );
  });

  it("never throws on arbitrary header strings", () => {
    fc.assert(
      fc.property(fc.string(), (header) => {
        expect(typeof verifyParleySignature(SECRET, BODY, header)).toBe("boolean");
      }),
    );
  });
});
