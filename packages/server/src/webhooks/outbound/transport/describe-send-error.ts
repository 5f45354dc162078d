import { DnsLookupError } from "./dns-lookup-error.js";
import { ProxyError } from "./proxy-error.js";
import { TargetRefusedError } from "./target-refused-error.js";

export interface SendErrorContext {
  /** The receiver URL, for errors that carry no address of their own. */
  url: URL;
  timeoutMs: number;
  connectTimeoutMs: number;
}

// Certificate verification failures as Node reports them (OpenSSL X509_V_ERR_* names).
const CERTIFICATE_CODES = new Set([
  "CERT_CHAIN_TOO_LONG",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_REJECTED",
  "CERT_REVOKED",
  "CERT_SIGNATURE_FAILURE",
  "CERT_UNTRUSTED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "HOSTNAME_MISMATCH",
  "INVALID_CA",
  "INVALID_PURPOSE",
  "PATH_LENGTH_EXCEEDED",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
]);

const CONNECTION_VERBS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ETIMEDOUT: "connection timed out",
  EPIPE: "connection closed",
  EADDRNOTAVAIL: "address not available",
};

interface NodeError extends Error {
  code?: string;
  address?: string;
  port?: number;
  library?: string;
}

/**
 * One line for the attempt log saying why an attempt failed. Built from error codes and addresses
 * only: request headers (and so the signature) never reach it.
 */
export function describeSendError(err: unknown, context: SendErrorContext): string {
  if (err instanceof TargetRefusedError || err instanceof DnsLookupError) return err.message;
  if (err instanceof ProxyError) return err.message;
  if (!(err instanceof Error)) return `request failed: ${String(err)}`;

  // With several addresses Node tries each (happy eyeballs) and reports all failures together.
  const first = (err instanceof AggregateError ? (err.errors[0] ?? err) : err) as NodeError;
  const code = (err as NodeError).code ?? first.code;

  switch (code) {
    case "UND_ERR_CONNECT_TIMEOUT":
      return `connect timed out after ${context.connectTimeoutMs} ms`;
    case "UND_ERR_HEADERS_TIMEOUT":
      return `timed out after ${context.timeoutMs} ms waiting for the response`;
    case "UND_ERR_BODY_TIMEOUT":
      return `timed out after ${context.timeoutMs} ms reading the response body`;
    case "UND_ERR_SOCKET":
      return "connection closed by the receiver before the response was complete";
    case "UND_ERR_RES_CONTENT_LENGTH_MISMATCH":
    case "HPE_INVALID_CONSTANT":
    case "HPE_INVALID_VERSION":
    case "HPE_INVALID_STATUS":
      return `invalid HTTP response from the receiver (${code})`;
  }
  if (isTlsError(first, code)) return `TLS error: ${first.message}`;
  if (code !== undefined && code in CONNECTION_VERBS) {
    const addresses =
      err instanceof AggregateError
        ? (err.errors as NodeError[]).map((e) => endpointOf(e, context.url))
        : [endpointOf(first, context.url)];
    return `${CONNECTION_VERBS[code]} (${code}) to ${[...new Set(addresses)].join(", ")}`;
  }
  return code === undefined
    ? `request failed: ${err.message}`
    : `request failed (${code}): ${err.message}`;
}

function isTlsError(err: NodeError, code: string | undefined): boolean {
  if (code === undefined) return false;
  return (
    CERTIFICATE_CODES.has(code) ||
    code.startsWith("ERR_SSL_") ||
    code.startsWith("ERR_TLS_") ||
    err.library === "SSL routines"
  );
}

function endpointOf(err: NodeError, url: URL): string {
  const host = err.address ?? url.hostname.replace(/^\[|\]$/g, "");
  const port =
    err.port ?? (url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80);
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}
