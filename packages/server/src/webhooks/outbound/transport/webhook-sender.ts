import { lookup as dnsLookup } from "node:dns";
import type { LookupFunction } from "node:net";
import { request } from "undici";
import type { StoredAuth } from "../endpoint-auth.js";
import type { ClientTls } from "./create-connector.js";
import { decodeUtf8Prefix } from "./decode-utf8-prefix.js";
import { describeSendError } from "./describe-send-error.js";
import { createEgressProxy, parseProxyUrl } from "./egress-proxy.js";
import { createGuardedLookup } from "./guarded-lookup.js";
import { OAuth2TokenCache, TokenRequestError } from "./oauth2-token-cache.js";
import { OutboundAgents } from "./outbound-agents.js";
import { hostRefusal } from "./ssrf-guard.js";
import { TargetRefusedError } from "./target-refused-error.js";

export interface SenderOptions {
  /** Budget for a whole attempt: connect, send, response headers and the body read. */
  timeoutMs: number;
  /** Budget for DNS + TCP + TLS, so a dead host fails fast. Default 5000, capped at timeoutMs. */
  connectTimeoutMs?: number;
  /** Connect to loopback and private addresses (development, tests). */
  allowPrivateNetworks: boolean;
  /**
   * Send to http:// URLs (PARLEY_WEBHOOK_ALLOW_HTTP, development). Checked at every attempt, not
   * only when an endpoint is created: turning the setting off stops plain-text deliveries to
   * endpoints registered while it was on.
   */
  allowHttp: boolean;
  /** Extra trusted CA certificates (PEM), added to Node's default roots. */
  ca?: string | Buffer;
  /** Default "Parley-Webhooks/1.0". */
  userAgent?: string;
  /** How much of a response body is read and kept. Default 2048. */
  maxResponseBytes?: number;
  /** DNS resolution, injectable for tests. Default: dns.lookup with all: true. */
  lookup?: LookupFunction;
  /** Cap on open connections per origin. Default: no cap. */
  connectionsPerOrigin?: number;
  /**
   * PARLEY_WEBHOOK_PROXY_URL: deliveries and OAuth token requests go through this HTTP proxy by
   * CONNECT, to the address the SSRF guard checked.
   */
  proxyUrl?: string | undefined;
}

export interface AttemptOutcome {
  ok: boolean;
  startedAt: Date;
  durationMs: number;
  /** Null when no response arrived. */
  responseStatus: number | null;
  /** At most maxResponseBytes of the body as UTF-8; "" for an empty body, null without a response. */
  responseBody: string | null;
  /** Why the attempt failed, or null on success. Never contains the secret or the signature. */
  error: string | null;
  /**
   * The response's headers (lower-cased names, at most 20, values cut to 256 characters); null
   * without a response. Optional so that outcomes built without a response stay short.
   */
  responseHeaders?: Record<string, string> | null;
}

/** One attempt's request: the frozen body, and the headers beside the fixed ones. */
export interface SendRequest {
  url: string;
  body: Uint8Array;
  /** `X-Webhook-Signature-256`, when the endpoint's scheme includes it. */
  signature?: string | undefined;
  /** Default application/json (CloudEvents' structured mode: application/cloudevents+json). */
  contentType?: string | undefined;
  /** Further headers: Standard Webhooks' and the endpoint's own, names lower-case. */
  headers?: Readonly<Record<string, string>> | undefined;
  /** The endpoint: whose OAuth token to use (tokens are cached per endpoint). */
  endpointId?: number | undefined;
  /** How to authenticate to the receiver: the `Authorization` header it gets. */
  auth?: StoredAuth | null | undefined;
  /** A client certificate for mutual TLS. */
  tls?: ClientTls | null | undefined;
}

export interface WebhookSender {
  /** One delivery attempt. Never throws: every failure is an outcome with ok: false. */
  send(request: SendRequest): Promise<AttemptOutcome>;
  /** Closes pooled connections; attempts in flight finish first (each bounded by timeoutMs). */
  close(): Promise<void>;
  /** New connections and OAuth token requests so far (benchmarks, tests). */
  stats?(): { connections: number; tokenRequests: number };
}

export const DEFAULT_USER_AGENT = "Parley-Webhooks/1.0";
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const DEFAULT_MAX_RESPONSE_BYTES = 2_048;

const systemLookup: LookupFunction = (hostname, options, callback) =>
  dnsLookup(hostname, { ...options, all: true }, callback);

export function createWebhookSender(options: SenderOptions): WebhookSender {
  const timeoutMs = options.timeoutMs;
  const connectTimeoutMs = Math.min(
    options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    timeoutMs,
  );
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
  const allowPrivateNetworks = options.allowPrivateNetworks;

  // One pool per origin with keep-alive, per TLS identity. The guarded lookup runs once per new
  // connection, so a reused connection goes to the address that was checked when it was opened.
  const agents = new OutboundAgents({
    connectTimeoutMs,
    timeoutMs,
    lookup: createGuardedLookup(options.lookup ?? systemLookup, allowPrivateNetworks),
    ca: options.ca,
    connectionsPerOrigin: options.connectionsPerOrigin,
    proxy:
      options.proxyUrl === undefined
        ? undefined
        : createEgressProxy(parseProxyUrl(options.proxyUrl)),
  });
  const tokens = new OAuth2TokenCache({
    dispatcher: () => agents.for(null),
    allowHttp: options.allowHttp,
    allowPrivateNetworks,
    timeoutMs,
    userAgent,
  });
  let closed = false;

  /** The Authorization header for this attempt; a fresh OAuth token when `renew`. */
  async function authorizationOf(delivery: SendRequest): Promise<string | undefined> {
    const auth = delivery.auth;
    if (auth === null || auth === undefined) return undefined;
    switch (auth.type) {
      case "basic":
        return `Basic ${Buffer.from(`${auth.username}:${auth.password}`, "utf8").toString("base64")}`;
      case "bearer":
        return `Bearer ${auth.token}`;
      case "oauth2":
        return `Bearer ${await tokens.token(delivery.endpointId ?? 0, auth)}`;
    }
  }

  async function send(delivery: SendRequest): Promise<AttemptOutcome> {
    const startedAt = new Date();
    const start = performance.now();
    let responseStatus: number | null = null;
    let responseBody: string | null = null;
    let responseHeaders: Record<string, string> | null = null;
    const outcome = (error: string | null): AttemptOutcome => ({
      ok: error === null,
      startedAt,
      durationMs: Math.round(performance.now() - start),
      responseStatus,
      responseBody,
      error,
      ...(responseHeaders === null ? {} : { responseHeaders }),
    });

    if (closed) return outcome("sender is closed");
    let url: URL;
    try {
      url = new URL(delivery.url);
    } catch {
      return outcome("invalid receiver url");
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") {
      return outcome(`url scheme ${url.protocol.slice(0, -1)} is not supported`);
    }
    if (url.protocol === "http:" && !options.allowHttp) {
      return outcome(
        "refused: http:// receivers are not allowed (PARLEY_WEBHOOK_ALLOW_HTTP is off); use https://",
      );
    }
    // IP literals never reach the lookup (the socket connects to them directly): check them here.
    if (!allowPrivateNetworks) {
      const refusal = hostRefusal(url.hostname);
      if (refusal !== null) return outcome(new TargetRefusedError(refusal).message);
    }

    const controller = new AbortController();
    let phase: "waiting for the response" | "reading the response body" =
      "waiting for the response";
    let timedOut = false;
    let onTimeout!: (reason: Error) => void;
    const timeout = new Promise<never>((_resolve, reject) => (onTimeout = reject));
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
      onTimeout(new Error("attempt timed out"));
    }, timeoutMs);
    const chunks: Buffer[] = [];
    let received = 0;

    const dispatcher = agents.for(delivery.tls);
    const exchange = async (authorization: string | undefined) => {
      const pending = request(url, {
        dispatcher,
        method: "POST",
        // Exactly these; undici adds only host, content-length and connection. The extra headers
        // cannot override the fixed ones: the admin API refuses their names.
        headers: {
          ...delivery.headers,
          ...(authorization === undefined ? {} : { authorization }),
          "content-type": delivery.contentType ?? "application/json",
          "user-agent": userAgent,
          ...(delivery.signature === undefined
            ? {}
            : { "x-webhook-signature-256": delivery.signature }),
        },
        body: delivery.body,
        signal: controller.signal,
      });
      // undici holds an abort back until the request has a connection, so a hanging connect
      // would outlast the budget: race it, and discard whatever it settles to later.
      pending.then(
        (late) => timedOut && late.body.destroy(),
        () => undefined,
      );
      return Promise.race([pending, timeout]);
    };

    try {
      let authorization = await Promise.race([authorizationOf(delivery), timeout]);
      let response = await exchange(authorization);
      if (
        response.statusCode === 401 &&
        delivery.auth?.type === "oauth2" &&
        authorization !== undefined
      ) {
        // The receiver refused the cached token (revoked, or its clock ran ahead): fetch a new
        // one and send again, once. The 401's body is dropped; the second answer is recorded.
        await response.body.dump().catch(() => undefined);
        tokens.invalidate(delivery.endpointId ?? 0, authorization.slice("Bearer ".length));
        authorization = await Promise.race([authorizationOf(delivery), timeout]);
        response = await exchange(authorization);
      }
      responseStatus = response.statusCode;
      responseHeaders = keptHeaders(response.headers);
      responseBody = "";
      phase = "reading the response body";

      let complete = true;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        received += chunk.length;
        // Keep no more than the log stores; leaving the loop destroys the body, which closes the
        // connection instead of downloading the rest.
        if (received > maxResponseBytes) {
          complete = false;
          break;
        }
      }
      // undici returns the connection to the pool on the next turn after the body ends; yield
      // once so that a send made right after this one reuses it instead of opening another.
      if (complete) await new Promise((resolve) => setImmediate(resolve));
      responseBody = decodeUtf8Prefix(Buffer.concat(chunks), maxResponseBytes);

      const status = response.statusCode;
      if (status >= 200 && status < 300) return outcome(null);
      // A redirect could point anywhere, internal addresses included: it is a failure, not a hop.
      if (status >= 300 && status < 400) {
        return outcome(`receiver answered HTTP ${status}; redirects are not followed`);
      }
      return outcome(`receiver answered HTTP ${status}`);
    } catch (err) {
      if (responseStatus !== null)
        responseBody = decodeUtf8Prefix(Buffer.concat(chunks), maxResponseBytes);
      if (timedOut) return outcome(`timed out after ${timeoutMs} ms ${phase}`);
      if (err instanceof TokenRequestError) return outcome(err.message);
      return outcome(describeSendError(err, { url, timeoutMs, connectTimeoutMs }));
    } finally {
      clearTimeout(timer);
    }
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    await agents.close();
  }

  return {
    send,
    close,
    stats: () => ({ connections: agents.connectionsOpened, tokenRequests: tokens.requests }),
  };
}

const MAX_KEPT_HEADERS = 20;
const MAX_KEPT_HEADER_CHARS = 256;

/** What the attempt log keeps of a response's headers: the first 20, values cut to 256. */
function keptHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const kept: Record<string, string> = {};
  let n = 0;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (++n > MAX_KEPT_HEADERS) break;
    const text = Array.isArray(value) ? value.join(", ") : value;
    kept[name.toLowerCase()] = text.slice(0, MAX_KEPT_HEADER_CHARS);
  }
  return kept;
}
