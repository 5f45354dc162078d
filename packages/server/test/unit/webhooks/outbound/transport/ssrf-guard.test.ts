import { describe, expect, it } from "vitest";
import {
  checkAddress,
  checkWebhookUrl,
  type UrlPolicy,
} from "../../../../../src/webhooks/outbound/transport/ssrf-guard.js";

describe("checkAddress", () => {
  it.each([
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "172.15.255.255", // just below 172.16.0.0/12
    "172.32.0.1", // just above it
    "100.63.255.255", // just below 100.64.0.0/10
    "100.128.0.1", // just above it
    "169.253.255.255",
    "192.169.0.1",
    "2606:4700:4700::1111",
    "2001:4860:4860::8888",
    "::ffff:8.8.8.8", // IPv4-mapped public address
    "2002:808:808::1", // 6to4 for 8.8.8.8
    "64:ff9b::808:808", // NAT64 for 8.8.8.8
    "2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo client 8.8.8.8
  ])("allows the public address %s", (ip) => {
    expect(checkAddress(ip)).toEqual({ allowed: true });
  });

  it.each([
    ["127.0.0.1", "is in a loopback range"],
    ["127.255.255.254", "is in a loopback range"],
    ["10.0.0.5", "is in a private range"],
    ["172.16.0.1", "is in a private range"],
    ["172.31.255.255", "is in a private range"],
    ["192.168.1.1", "is in a private range"],
    ["169.254.1.1", "is in a link-local range"],
    ["100.64.0.1", "is in a carrier-grade NAT range"],
    ["100.127.255.255", "is in a carrier-grade NAT range"],
    ["224.0.0.1", "is in a multicast range"],
    ["239.255.255.250", "is in a multicast range"],
    ["0.0.0.0", "is in an unspecified range"],
    ["0.1.2.3", "is in an unspecified range"],
    ["255.255.255.255", "is in a broadcast range"],
    ["192.0.2.1", "is in a reserved range"],
    ["198.51.100.7", "is in a reserved range"],
    ["203.0.113.9", "is in a reserved range"],
    ["198.18.0.1", "is in a reserved range"],
    ["240.0.0.1", "is in a reserved range"],
    ["::1", "is in a loopback range"],
    ["::", "is in an unspecified range"],
    ["fc00::1", "is in a unique local range"],
    ["fd12:3456:789a::1", "is in a unique local range"],
    ["fe80::1", "is in a link-local range"],
    ["fe80::1%eth0", "is in a link-local range"],
    ["fec0::1", "is in a site-local range"],
    ["ff02::1", "is in a multicast range"],
    ["2001:db8::1", "is in a reserved range"],
    ["::7f00:1", "is in a deprecated IPv4-compatible range"],
    ["64:ff9b:1::a00:1", "is in a local-use NAT64 range"],
  ])("refuses %s: it %s", (ip, why) => {
    expect(checkAddress(ip)).toEqual({ allowed: false, reason: `address ${ip} ${why}` });
  });

  it.each([
    ["::ffff:127.0.0.1", "maps to 127.0.0.1, which is in a loopback range"],
    ["::ffff:7f00:1", "maps to 127.0.0.1, which is in a loopback range"],
    ["::ffff:10.0.0.1", "maps to 10.0.0.1, which is in a private range"],
    ["::ffff:0:7f00:1", "translates to 127.0.0.1, which is in a loopback range"],
    ["64:ff9b::a00:1", "is a NAT64 address for 10.0.0.1, which is in a private range"],
    ["64:ff9b::127.0.0.1", "is a NAT64 address for 127.0.0.1, which is in a loopback range"],
    ["2002:7f00:1::1", "is a 6to4 address for 127.0.0.1, which is in a loopback range"],
    ["2002:c0a8:101::", "is a 6to4 address for 192.168.1.1, which is in a private range"],
    [
      "2001:0:4136:e378:8000:63bf:80ff:fffe",
      "is a Teredo address for 127.0.0.1, which is in a loopback range",
    ],
  ])("refuses %s, an IPv6 form of a refused IPv4 address: it %s", (ip, why) => {
    expect(checkAddress(ip)).toEqual({ allowed: false, reason: `address ${ip} ${why}` });
  });

  it.each([
    ["169.254.169.254", "is a cloud metadata address"],
    ["169.254.170.2", "is a cloud metadata address"],
    ["100.100.100.200", "is a cloud metadata address"],
    ["fd00:ec2::254", "is a cloud metadata address"],
    ["FD00:EC2:0:0::254", "is a cloud metadata address"],
    ["::ffff:169.254.169.254", "maps to 169.254.169.254, which is a cloud metadata address"],
  ])("refuses the cloud metadata address %s by name", (ip, why) => {
    expect(checkAddress(ip)).toEqual({ allowed: false, reason: `address ${ip} ${why}` });
  });

  it.each(["localhost", "0x7f.1", "127.1", "017700000001", "[::1]", ""])(
    "refuses %j, which is not an address the socket layer would read the same way",
    (ip) => {
      expect(checkAddress(ip)).toEqual({
        allowed: false,
        reason: `address ${ip} is not an IP address`,
      });
    },
  );
});

describe("checkWebhookUrl", () => {
  const strict: UrlPolicy = { allowHttp: false, allowPrivateNetworks: false };
  const development: UrlPolicy = { allowHttp: true, allowPrivateNetworks: true };

  it("accepts a public https URL and returns it parsed", () => {
    const check = checkWebhookUrl("https://hooks.example.com/parley?team=7", strict);
    expect(check.ok).toBe(true);
    if (check.ok) expect(check.url.href).toBe("https://hooks.example.com/parley?team=7");
  });

  it("does not resolve host names at create time", () => {
    expect(checkWebhookUrl("https://internal.corp.example/hook", strict).ok).toBe(true);
  });

  it("accepts a public IP literal", () => {
    expect(checkWebhookUrl("https://8.8.8.8/hook", strict).ok).toBe(true);
    expect(checkWebhookUrl("https://[2606:4700:4700::1111]/hook", strict).ok).toBe(true);
  });

  it.each(["not a url", "/relative/path", "https://", "hooks.example.com/parley"])(
    "refuses %j as invalid_url",
    (raw) => {
      expect(checkWebhookUrl(raw, strict)).toMatchObject({ ok: false, code: "invalid_url" });
    },
  );

  it("refuses http:// unless http is allowed", () => {
    expect(checkWebhookUrl("http://hooks.example.com/", strict)).toEqual({
      ok: false,
      code: "url_scheme_not_allowed",
      message:
        "url scheme http is not allowed; use https:// (for development, PARLEY_WEBHOOK_ALLOW_HTTP=true allows http://)",
    });
    expect(checkWebhookUrl("http://hooks.example.com/", { ...strict, allowHttp: true }).ok).toBe(
      true,
    );
  });

  it.each(["ftp://example.com/", "file:///etc/passwd", "javascript:alert(1)", "ws://example.com/"])(
    "refuses the scheme of %s even when http is allowed",
    (raw) => {
      expect(checkWebhookUrl(raw, development)).toMatchObject({
        ok: false,
        code: "url_scheme_not_allowed",
      });
    },
  );

  it.each(["https://user:hunter2@hooks.example.com/", "https://t0ken@hooks.example.com/"])(
    "refuses credentials in %s without repeating them",
    (raw) => {
      const check = checkWebhookUrl(raw, development);
      expect(check).toMatchObject({ ok: false, code: "invalid_url" });
      if (!check.ok) {
        expect(check.message).not.toContain("hunter2");
        expect(check.message).not.toContain("t0ken");
      }
    },
  );

  it.each([
    ["https://10.0.0.5/hook", "address 10.0.0.5 is in a private range"],
    ["https://127.0.0.1:8443/hook", "address 127.0.0.1 is in a loopback range"],
    ["https://[::1]/hook", "address ::1 is in a loopback range"],
    ["https://[::ffff:127.0.0.1]/hook", "address ::ffff:7f00:1 maps to 127.0.0.1"],
    ["https://[fd00:ec2::254]/latest", "address fd00:ec2::254 is a cloud metadata address"],
    ["https://169.254.169.254/latest/meta-data/", "address 169.254.169.254 is a cloud metadata"],
    // WHATWG URL normalises these IPv4 spellings to 127.0.0.1 before anything sees them.
    ["https://2130706433/", "address 127.0.0.1 is in a loopback range"],
    ["https://0x7f.1/", "address 127.0.0.1 is in a loopback range"],
    ["https://0177.0.0.1/", "address 127.0.0.1 is in a loopback range"],
    ["https://127.1/", "address 127.0.0.1 is in a loopback range"],
    ["https://localhost:8443/hook", "host localhost is a loopback name"],
    ["https://LOCALHOST./hook", "host localhost is a loopback name"],
    ["https://api.localhost/hook", "host api.localhost is a loopback name"],
  ])("refuses the internal host of %s", (raw, why) => {
    const check = checkWebhookUrl(raw, strict);
    expect(check).toMatchObject({ ok: false, code: "url_host_not_allowed" });
    if (!check.ok) expect(check.message).toContain(why);
  });

  it.each([
    "https://10.0.0.5/hook",
    "https://127.0.0.1:8443/hook",
    "http://[::1]:9000/hook",
    "http://localhost:9000/hook",
  ])("accepts %s when private networks are allowed", (raw) => {
    expect(checkWebhookUrl(raw, development).ok).toBe(true);
  });
});
