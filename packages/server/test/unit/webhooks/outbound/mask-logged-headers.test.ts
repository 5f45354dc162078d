import { describe, expect, it } from "vitest";
import {
  maskLoggedRequestHeaders,
  maskLoggedResponseHeaders,
} from "../../../../src/webhooks/outbound/mask-logged-headers.js";

describe("maskLoggedRequestHeaders", () => {
  const sent = {
    "content-type": "application/json",
    "user-agent": "Parley-Webhooks/1.0",
    "x-webhook-signature-256": `sha256=${"a1".repeat(32)}`,
    "webhook-id": "evt_01KAZ6YB0Q4G1V0XKZ8Y3F5M2N",
    "webhook-timestamp": "1795161600",
    "webhook-signature": "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4= v1,3f7+b2c1aW5nY29kZQ==",
    authorization: "****1234",
  };

  it("keeps each signature's scheme only, and every other header as it is", () => {
    expect(maskLoggedRequestHeaders(sent)).toEqual({
      ...sent,
      "x-webhook-signature-256": "sha256=****",
      "webhook-signature": "v1,**** v1,****",
    });
  });

  it("keeps only the scheme of an Authorization header that is not masked yet", () => {
    expect(maskLoggedRequestHeaders({ authorization: "Bearer eyJhbGciOi.x.y" })).toEqual({
      authorization: "Bearer ****",
    });
    expect(maskLoggedRequestHeaders({ Authorization: "Basic cGFybGV5OnB3" })).toEqual({
      Authorization: "Basic ****",
    });
    expect(maskLoggedRequestHeaders({ authorization: "opaque-credential" })).toEqual({
      authorization: "****",
    });
  });

  it("masks a signature without a scheme whole, and is idempotent", () => {
    expect(maskLoggedRequestHeaders({ "X-Webhook-Signature-256": "deadbeef" })).toEqual({
      "X-Webhook-Signature-256": "****",
    });
    const once = maskLoggedRequestHeaders(sent);
    expect(maskLoggedRequestHeaders(once)).toEqual(once);
  });
});

describe("maskLoggedResponseHeaders", () => {
  it.each([
    "set-cookie",
    "authorization",
    "proxy-authenticate",
    "www-authenticate",
    "x-api-key",
    "x-auth-token",
    "x-csrf-token",
    "x-client-secret",
    "x-session-id",
    "x-amz-security-token",
    "X-Refresh-Token",
  ])("masks the value of %s whole", (name) => {
    expect(maskLoggedResponseHeaders({ [name]: "session=eyJhbGciOi.secret; HttpOnly" })).toEqual({
      [name]: "****",
    });
  });

  it("keeps the receiver's other headers as they are", () => {
    const received = {
      "content-type": "text/plain",
      "retry-after": "30",
      "x-request-id": "req-81723",
      "keep-alive": "timeout=5",
      date: "Fri, 20 Nov 2026 08:00:00 GMT",
    };
    expect(maskLoggedResponseHeaders(received)).toEqual(received);
  });
});
