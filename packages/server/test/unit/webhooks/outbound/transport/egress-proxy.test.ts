import { describe, expect, it } from "vitest";
import { parseProxyUrl } from "../../../../../src/webhooks/outbound/transport/egress-proxy.js";

describe("parseProxyUrl", () => {
  it("accepts http://host:port, with or without credentials", () => {
    expect(parseProxyUrl("http://proxy.internal:3128").host).toBe("proxy.internal:3128");
    const withCredentials = parseProxyUrl("http://parley:s%2Fcret@10.0.0.5:8080");
    expect(withCredentials.username).toBe("parley");
    expect(decodeURIComponent(withCredentials.password)).toBe("s/cret");
  });

  it.each([
    ["https://proxy:3128", "must be an http:// URL"],
    ["socks5://proxy:1080", "must be an http:// URL"],
    ["proxy:3128", "must be an http:// URL"],
    ["not a url", "must be an absolute URL"],
    ["http://proxy:3128/path", "must be only http://"],
  ])("refuses %s", (raw, message) => {
    expect(() => parseProxyUrl(raw)).toThrow(message);
  });
});
