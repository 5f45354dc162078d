import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signPayload } from "../../../../../src/webhooks/outbound/delivery-engine/sign-payload.js";
import vectors from "../../../../fixtures/signatures.json" with { type: "json" };

describe("signPayload", () => {
  it("has at least four known-answer vectors, one with a non-ASCII secret and body", () => {
    expect(vectors.length).toBeGreaterThanOrEqual(4);
    const nonAscii = vectors.filter(
      (v) =>
        Buffer.from(v.secret, "utf8").some((b) => b > 0x7f) &&
        Buffer.from(v.bodyBase64, "base64").some((b) => b > 0x7f),
    );
    expect(nonAscii.length).toBeGreaterThanOrEqual(1);
  });

  describe.each(vectors)("vector: $description", (vector) => {
    const body = Buffer.from(vector.bodyBase64, "base64");

    it("produces the expected header over the raw body bytes", () => {
      expect(signPayload(vector.secret, body)).toBe(vector.header);
    });

    it("agrees with an HMAC computed directly with node:crypto", () => {
      const hex = createHmac("sha256", Buffer.from(vector.secret, "utf8"))
        .update(body)
        .digest("hex");
      expect(signPayload(vector.secret, new Uint8Array(body))).toBe(`sha256=${hex}`);
    });
  });

  it("signs a string body as its UTF-8 bytes", () => {
    const text = '{"message":"Grüße 🎉"}';
    expect(signPayload("s3cret-s3cret-s3cret", text)).toBe(
      signPayload("s3cret-s3cret-s3cret", Buffer.from(text, "utf8")),
    );
  });

  it("signs a Uint8Array view by its own bytes, not the whole underlying buffer", () => {
    const backing = Buffer.from('xx{"a":1}yy');
    const view = new Uint8Array(backing.buffer, backing.byteOffset + 2, 7);
    expect(signPayload("secret-secret-secret", view)).toBe(
      signPayload("secret-secret-secret", '{"a":1}'),
    );
  });

  it("changes when a single body byte changes", () => {
    expect(signPayload("k".repeat(16), '{"a":1}')).not.toBe(signPayload("k".repeat(16), '{"a":2}'));
  });

  it("is lowercase hex behind a sha256= prefix", () => {
    expect(signPayload("any-secret-value", "{}")).toMatch(/^sha256=[0-9a-f]{64}$/);
  });
});
