import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

export type AddressCheck = { allowed: true } | { allowed: false; reason: string };

export interface UrlPolicy {
  /** Accept `http://` receivers (development only). */
  allowHttp: boolean;
  /** Accept loopback, private and other internal targets (development, tests). */
  allowPrivateNetworks: boolean;
}

export type UrlCheck =
  | { ok: true; url: URL }
  | {
      ok: false;
      code: "invalid_url" | "url_scheme_not_allowed" | "url_host_not_allowed";
      message: string;
    };

// Instance metadata services hand out cloud credentials: named apart from their ranges so the
// refusal says what the address really is. (AWS/GCP/Azure, AWS ECS task metadata, AWS IPv6 IMDS,
// Alibaba Cloud.)
const CLOUD_METADATA = new Set([
  "169.254.169.254",
  "169.254.170.2",
  "fd00:ec2::254",
  "100.100.100.200",
]);

const IPV4_REFUSED: Record<string, string> = {
  unspecified: "an unspecified",
  broadcast: "a broadcast",
  multicast: "a multicast",
  linkLocal: "a link-local",
  loopback: "a loopback",
  carrierGradeNat: "a carrier-grade NAT",
  private: "a private",
  reserved: "a reserved",
};

// Ranges of ipaddr.js's IPv6 table that are not reachable public unicast. Ranges that embed an
// IPv4 address (mapped, translated, NAT64, 6to4, Teredo) are handled apart: they are judged by the
// IPv4 address inside. `amt` and `as112v6` are public anycast and stay allowed.
const IPV6_REFUSED: Record<string, string> = {
  unspecified: "an unspecified",
  linkLocal: "a link-local",
  multicast: "a multicast",
  loopback: "a loopback",
  uniqueLocal: "a unique local",
  deprecatedSiteLocal: "a site-local",
  discard: "a discard-only",
  benchmarking: "a benchmarking",
  deprecatedOrchid: "an ORCHID",
  orchid2: "an ORCHID",
  droneRemoteIdProtocolEntityTags: "a reserved",
  segmentRouting: "a segment-routing",
  reserved: "a reserved",
  // 64:ff9b:1::/48 is for local NAT64 deployments, whose IPv4 mapping is site-specific.
  rfc6052Local: "a local-use NAT64",
  // ::a.b.c.d, deprecated by RFC 4291; nothing legitimate is reached that way.
  ipv4Compatible: "a deprecated IPv4-compatible",
};

const NAT64_WELL_KNOWN = ipaddr.IPv6.parse("64:ff9b::");
const IPV4_COMPATIBLE = ipaddr.IPv6.parse("::");

/**
 * Whether an outbound webhook may connect to `ip`. Refuses everything that is not public unicast:
 * loopback, RFC 1918, link-local, CGNAT, multicast, unspecified, broadcast, reserved, unique local,
 * cloud metadata, and IPv6 forms that embed such an IPv4 address.
 */
export function checkAddress(ip: string): AddressCheck {
  const refusal = refusalOf(ip);
  return refusal === null
    ? { allowed: true }
    : { allowed: false, reason: `address ${ip} ${refusal}` };
}

/** How `ip` is refused ("is in a private range"), or null when it is allowed. */
function refusalOf(ip: string): string | null {
  // net.isIP is the gate rather than ipaddr.isValid, which also accepts "0x7f.1" or "010.0.0.1":
  // only forms the socket layer reads the same way are judged.
  const family = isIP(ip);
  if (family === 0) return "is not an IP address";
  if (CLOUD_METADATA.has(ip.toLowerCase())) return "is a cloud metadata address";

  if (family === 4) return ipv4Refusal(ipaddr.IPv4.parse(ip));

  const v6 = ipaddr.IPv6.parse(ip);
  if (CLOUD_METADATA.has(withoutZone(v6).toString())) return "is a cloud metadata address";
  const embedded = embeddedIPv4(v6);
  if (embedded !== null) {
    const inner = ipv4Refusal(embedded.address);
    return inner === null
      ? null
      : `${embedded.form} ${embedded.address.toString()}, which ${inner}`;
  }
  const range = ipv6Range(v6);
  const label = IPV6_REFUSED[range];
  return label === undefined ? null : `is in ${label} range`;
}

function ipv4Refusal(address: ipaddr.IPv4): string | null {
  const text = address.toString();
  if (CLOUD_METADATA.has(text)) return "is a cloud metadata address";
  const label = IPV4_REFUSED[address.range()];
  return label === undefined ? null : `is in ${label} range`;
}

function ipv6Range(address: ipaddr.IPv6): string {
  if (address.match(NAT64_WELL_KNOWN, 96)) return "rfc6052";
  const range = address.range();
  if (range === "rfc6052") return "rfc6052Local";
  // ipaddr.js has no name for ::/96 beyond :: and ::1 (unspecified, loopback, matched above).
  if (range === "unicast" && address.match(IPV4_COMPATIBLE, 96)) return "ipv4Compatible";
  return range;
}

/** The IPv4 address an IPv6 address stands for or tunnels to, when it has one. */
function embeddedIPv4(address: ipaddr.IPv6): { form: string; address: ipaddr.IPv4 } | null {
  const parts = address.parts;
  const fromParts = (high: number, low: number) =>
    new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  const range = ipv6Range(address);
  switch (range) {
    case "ipv4Mapped":
      return { form: "maps to", address: address.toIPv4Address() };
    case "rfc6145":
      return { form: "translates to", address: fromParts(parts[6]!, parts[7]!) };
    case "rfc6052":
      return { form: "is a NAT64 address for", address: fromParts(parts[6]!, parts[7]!) };
    case "6to4":
      return { form: "is a 6to4 address for", address: fromParts(parts[1]!, parts[2]!) };
    case "teredo": {
      // RFC 4380: the client's IPv4 address is stored inverted in the last 32 bits; the packets
      // end up there, so that is the address to judge.
      return {
        form: "is a Teredo address for",
        address: fromParts(~parts[6]! & 0xffff, ~parts[7]! & 0xffff),
      };
    }
    default:
      return null;
  }
}

function withoutZone(address: ipaddr.IPv6): ipaddr.IPv6 {
  return address.zoneId === undefined ? address : new ipaddr.IPv6(address.parts);
}

/**
 * Create-time check of a receiver URL (docs/webhooks.md, "Network safety"). Hostnames are not
 * resolved here: DNS answers change, so the address is checked again when each attempt connects.
 */
export function checkWebhookUrl(raw: string, policy: UrlPolicy): UrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, code: "invalid_url", message: "url must be an absolute URL" };
  }

  if (url.protocol !== "https:" && !(url.protocol === "http:" && policy.allowHttp)) {
    const scheme = url.protocol.slice(0, -1);
    const allowed = policy.allowHttp ? "https:// or http://" : "https://";
    // Say how to allow plain http for a local receiver, instead of leaving the operator to guess.
    const hint =
      scheme === "http" ? " (for development, PARLEY_WEBHOOK_ALLOW_HTTP=true allows http://)" : "";
    return {
      ok: false,
      code: "url_scheme_not_allowed",
      message: `url scheme ${scheme} is not allowed; use ${allowed}${hint}`,
    };
  }

  // Credentials in a URL end up in logs and the admin UI; receivers authenticate us by signature.
  if (url.username !== "" || url.password !== "") {
    return {
      ok: false,
      code: "invalid_url",
      message: "url must not contain a user name or password",
    };
  }
  if (url.hostname === "") {
    return { ok: false, code: "invalid_url", message: "url must have a host" };
  }

  if (!policy.allowPrivateNetworks) {
    const refusal = hostRefusal(url.hostname);
    if (refusal !== null) {
      return {
        ok: false,
        code: "url_host_not_allowed",
        message: `url host is not allowed: ${refusal}`,
      };
    }
  }
  return { ok: true, url };
}

/**
 * Why a URL host (as `URL.hostname` gives it) is refused without resolving it, or null. IP literals
 * are judged by address; WHATWG URL has already turned "2130706433" or "0x7f.1" into 127.0.0.1.
 */
export function hostRefusal(hostname: string): string | null {
  const host =
    hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  if (isIP(host) !== 0) {
    const check = checkAddress(host);
    return check.allowed ? null : check.reason;
  }
  // RFC 6761: localhost and everything under it is loopback, whatever DNS says.
  const name = host.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) {
    return `host ${name} is a loopback name`;
  }
  return null;
}
