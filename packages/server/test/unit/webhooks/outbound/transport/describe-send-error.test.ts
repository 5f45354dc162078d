import { describe, expect, it } from "vitest";
import { describeSendError } from "../../../../../src/webhooks/outbound/transport/describe-send-error.js";
import { DnsLookupError } from "../../../../../src/webhooks/outbound/transport/dns-lookup-error.js";
import { TargetRefusedError } from "../../../../../src/webhooks/outbound/transport/target-refused-error.js";

const context = {
  url: new URL("https://hooks.example.com/parley"),
  timeoutMs: 30_000,
  connectTimeoutMs: 5_000,
};
const nodeError = (code: string, message: string, extra: object = {}) =>
  Object.assign(new Error(message), { code }, extra);

describe("describeSendError", () => {
  it("passes a refused target and a DNS failure through as they are worded", () => {
    expect(
      describeSendError(new TargetRefusedError("address 10.0.0.5 is in a private range"), context),
    ).toBe("target refused: address 10.0.0.5 is in a private range");
    expect(describeSendError(new DnsLookupError("nosuch.invalid", "ENOTFOUND"), context)).toBe(
      "DNS lookup failed for nosuch.invalid: ENOTFOUND",
    );
  });

  it("lists every address tried when happy eyeballs reports several refusals", () => {
    const err = Object.assign(
      new AggregateError([
        nodeError("ECONNREFUSED", "connect ECONNREFUSED ::1:8443", { address: "::1", port: 8443 }),
        nodeError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:8443", {
          address: "127.0.0.1",
          port: 8443,
        }),
      ]),
      { code: "ECONNREFUSED" },
    );
    expect(describeSendError(err, context)).toBe(
      "connection refused (ECONNREFUSED) to [::1]:8443, 127.0.0.1:8443",
    );
  });

  it("falls back to the URL's host and default port when the error carries no address", () => {
    expect(describeSendError(nodeError("ECONNRESET", "read ECONNRESET"), context)).toBe(
      "connection reset (ECONNRESET) to hooks.example.com:443",
    );
  });

  it.each([
    ["UND_ERR_CONNECT_TIMEOUT", "connect timed out after 5000 ms"],
    ["UND_ERR_HEADERS_TIMEOUT", "timed out after 30000 ms waiting for the response"],
    ["UND_ERR_BODY_TIMEOUT", "timed out after 30000 ms reading the response body"],
    ["UND_ERR_SOCKET", "connection closed by the receiver before the response was complete"],
  ])("words undici's %s", (code, text) => {
    expect(describeSendError(nodeError(code, "whatever undici said"), context)).toBe(text);
  });

  it.each([
    ["CERT_HAS_EXPIRED", "certificate has expired"],
    ["ERR_TLS_CERT_ALTNAME_INVALID", "Hostname/IP does not match certificate's altnames"],
    ["ERR_SSL_WRONG_VERSION_NUMBER", "wrong version number"],
  ])("marks %s as a TLS error", (code, message) => {
    expect(describeSendError(nodeError(code, message), context)).toBe(`TLS error: ${message}`);
  });

  it("keeps the code and message of anything else", () => {
    expect(describeSendError(nodeError("EMFILE", "too many open files"), context)).toBe(
      "request failed (EMFILE): too many open files",
    );
    expect(describeSendError("bare string", context)).toBe("request failed: bare string");
  });
});
