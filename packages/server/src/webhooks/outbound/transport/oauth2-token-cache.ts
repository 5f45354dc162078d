import { createHash } from "node:crypto";
import * as oauth from "oauth4webapi";
import { fetch, type Dispatcher } from "undici";
import { describeSendError } from "./describe-send-error.js";
import { hostRefusal } from "./ssrf-guard.js";
import { TargetRefusedError } from "./target-refused-error.js";

/** An endpoint's OAuth 2.0 client-credentials settings (its `auth` of type oauth2). */
export interface OAuth2ClientCredentials {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope: string | null;
  audience: string | null;
}

export interface OAuth2TokenCacheOptions {
  /** The pool token requests go through: the SSRF-guarded one, through the proxy when set. */
  dispatcher: () => Dispatcher;
  /** Token URLs may be http:// (PARLEY_WEBHOOK_ALLOW_HTTP). */
  allowHttp: boolean;
  allowPrivateNetworks: boolean;
  /** Budget for one token request. */
  timeoutMs: number;
  userAgent: string;
  now?: () => number;
}

/** A token request that failed: its message names the token endpoint's answer. */
export class TokenRequestError extends Error {
  override readonly name = "TokenRequestError";
}

/** A token is used until this long before it expires, then fetched again. */
export const REFRESH_BEFORE_EXPIRY_MS = 30_000;
/** A token answered without expires_in is kept this long (or until a 401). */
export const DEFAULT_TOKEN_LIFETIME_MS = 3_600_000;
const MAX_ANSWER_CHARS = 200;

interface CachedToken {
  /** Which settings it was fetched with: changed settings fetch a new one. */
  settings: string;
  accessToken: string;
  refreshAt: number;
}

/**
 * OAuth 2.0 access tokens of the client-credentials grant (RFC 6749 section 4.4), one per
 * endpoint, shared by every delivery of this process: fetched on first use, used until 30 s
 * before `expires_in`, fetched again after a 401 answer (`invalidate`). Concurrent deliveries of
 * an endpoint wait for the one request in flight instead of each asking. The client
 * authenticates with HTTP Basic (client_secret_basic); `scope` and `audience` go as form
 * parameters. The request is made by oauth4webapi over undici, through the same SSRF-guarded
 * connection pool as the deliveries (and so through the egress proxy, when one is set).
 */
export class OAuth2TokenCache {
  private readonly tokens = new Map<number, CachedToken>();
  private readonly pending = new Map<number, { settings: string; token: Promise<string> }>();
  private readonly now: () => number;
  private requestCount = 0;

  constructor(private readonly options: OAuth2TokenCacheOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Token requests made so far (benchmarks, tests). */
  get requests(): number {
    return this.requestCount;
  }

  /** The endpoint's access token: the cached one while fresh, else a new one. */
  async token(endpointId: number, credentials: OAuth2ClientCredentials): Promise<string> {
    const settings = fingerprint(credentials);
    const cached = this.tokens.get(endpointId);
    if (cached !== undefined && cached.settings === settings && this.now() < cached.refreshAt)
      return cached.accessToken;
    const inFlight = this.pending.get(endpointId);
    if (inFlight !== undefined && inFlight.settings === settings) return inFlight.token;
    const token = this.request(endpointId, credentials, settings).finally(() => {
      if (this.pending.get(endpointId)?.token === token) this.pending.delete(endpointId);
    });
    this.pending.set(endpointId, { settings, token });
    return token;
  }

  /** The receiver refused `accessToken` (401): the next `token` call fetches a new one. */
  invalidate(endpointId: number, accessToken: string): void {
    if (this.tokens.get(endpointId)?.accessToken === accessToken) this.tokens.delete(endpointId);
  }

  private async request(
    endpointId: number,
    credentials: OAuth2ClientCredentials,
    settings: string,
  ): Promise<string> {
    const { tokenUrl } = credentials;
    const fail = (why: string) =>
      new TokenRequestError(`OAuth token request to ${tokenUrl} failed: ${why}`);
    let url: URL;
    try {
      url = new URL(tokenUrl);
    } catch {
      throw fail("the token URL is not a valid URL");
    }
    if (url.protocol !== "https:" && !(url.protocol === "http:" && this.options.allowHttp))
      throw fail(
        `refused: ${url.protocol.slice(0, -1)}:// token URLs are not allowed; use https://`,
      );
    // IP literals never reach the guarded lookup: check them here, as the sender does.
    if (!this.options.allowPrivateNetworks) {
      const refusal = hostRefusal(url.hostname);
      if (refusal !== null) throw fail(new TargetRefusedError(refusal).message);
    }

    const as: oauth.AuthorizationServer = { issuer: url.origin, token_endpoint: url.href };
    const client: oauth.Client = { client_id: credentials.clientId };
    const parameters = new URLSearchParams();
    if (credentials.scope !== null) parameters.set("scope", credentials.scope);
    if (credentials.audience !== null) parameters.set("audience", credentials.audience);
    const dispatcher = this.options.dispatcher();
    this.requestCount++;
    let answer: oauth.TokenEndpointResponse;
    try {
      const response = await oauth.clientCredentialsGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(credentials.clientSecret),
        parameters,
        {
          [oauth.customFetch]: (input, init) =>
            fetch(input, { ...(init as object), dispatcher }) as unknown as Promise<Response>,
          [oauth.allowInsecureRequests]: url.protocol === "http:",
          headers: { "user-agent": this.options.userAgent },
          signal: AbortSignal.timeout(this.options.timeoutMs),
        },
      );
      answer = await oauth.processClientCredentialsResponse(as, client, response);
    } catch (error) {
      throw fail(await explain(error, url, this.options.timeoutMs));
    }
    if (answer.token_type !== "bearer")
      throw fail(
        `the token endpoint answered a ${answer.token_type} token; only bearer tokens are supported`,
      );
    const lifetimeMs =
      answer.expires_in === undefined ? DEFAULT_TOKEN_LIFETIME_MS : answer.expires_in * 1000;
    // A settings change while the request was out: this token belongs to the old settings.
    if (this.pending.get(endpointId)?.settings === settings)
      this.tokens.set(endpointId, {
        settings,
        accessToken: answer.access_token,
        refreshAt: this.now() + lifetimeMs - REFRESH_BEFORE_EXPIRY_MS,
      });
    return answer.access_token;
  }
}

/** Hashes of the settings objects seen (the dispatcher hands the same object for one ciphertext). */
const fingerprints = new WeakMap<OAuth2ClientCredentials, string>();

/** A hash of the settings (not the settings: the cache holds no client secret of its own). */
function fingerprint(credentials: OAuth2ClientCredentials): string {
  let hash = fingerprints.get(credentials);
  if (hash === undefined) {
    hash = hashOf(credentials);
    fingerprints.set(credentials, hash);
  }
  return hash;
}

function hashOf(credentials: OAuth2ClientCredentials): string {
  return createHash("sha256")
    .update(
      JSON.stringify([
        credentials.tokenUrl,
        credentials.clientId,
        credentials.clientSecret,
        credentials.scope,
        credentials.audience,
      ]),
    )
    .digest("base64url");
}

/** What the token endpoint answered, or why it could not be asked, in one line. */
async function explain(error: unknown, url: URL, timeoutMs: number): Promise<string> {
  if (error instanceof oauth.ResponseBodyError) {
    const description =
      error.error_description === undefined ? "" : `: ${cut(error.error_description)}`;
    return `the token endpoint answered HTTP ${error.status} ${cut(error.error)}${description}`;
  }
  if (error instanceof oauth.WWWAuthenticateChallengeError) {
    const challenge = error.cause[0];
    const why = challenge?.parameters.error ?? challenge?.scheme ?? "a challenge";
    return `the token endpoint answered HTTP ${error.status} (WWW-Authenticate: ${cut(why)})`;
  }
  if (error instanceof oauth.OperationProcessingError) {
    const response = error.cause instanceof Object && "status" in error.cause ? error.cause : null;
    if (response !== null) {
      const status = (response as { status: number }).status;
      let body = "";
      try {
        body = cut(await (response as Response).text());
      } catch {
        // Already read, or the connection went: the status says enough.
      }
      return `the token endpoint answered HTTP ${status}${body === "" ? "" : `: ${body}`}`;
    }
    return `the token endpoint's answer is not a valid token response (${cut(error.message)})`;
  }
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError"))
    return `timed out after ${timeoutMs} ms`;
  // undici's fetch reports network failures as TypeError("fetch failed") with the cause.
  const cause = error instanceof TypeError && error.cause !== undefined ? error.cause : error;
  return describeSendError(cause, { url, timeoutMs, connectTimeoutMs: timeoutMs });
}

function cut(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > MAX_ANSWER_CHARS ? `${line.slice(0, MAX_ANSWER_CHARS)}...` : line;
}
