import path from "node:path";
import { ConfigError } from "./config-error.js";
import { SETTINGS, type Setting, type SettingName } from "./config-schema.js";

export type Edition = "enterprise" | "community";

export interface RateLimit {
  max: number;
  windowMs: number;
  /** As written, e.g. "60/1m". */
  text: string;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  databaseTimeoutMs: number;
  redisUrl: string | undefined;
  redisKeyPrefix: string;
  publicBaseUrl: string | undefined;
  httpRequestTimeoutMs: number;
  httpHeadersTimeoutMs: number;
  httpKeepAliveTimeoutMs: number;
  httpMaxConnections: number;
  edition: Edition;
  jwtSecret: string | undefined;
  jwtJwksUrl: string | undefined;
  jwtIssuer: string | undefined;
  jwtAudience: string | undefined;
  secretKey: string | undefined;
  masterKey: string | undefined;
  masterKeyFile: string | undefined;
  insecureKeysInDatabase: boolean;
  webhookTimeoutMs: number;
  webhookMaxAttempts: number;
  webhookBackoffBaseMs: number;
  webhookBackoffMaxMs: number;
  webhookSweepIntervalMs: number;
  webhookConcurrency: number;
  webhookPerEndpointConcurrency: number;
  webhookWaitSlots: number;
  /** Undefined: from the machine's cores (`sendThreadsFor`). */
  webhookSendThreads: number | undefined;
  webhookAutoDisableAfterMs: number;
  webhookAutoDisableMinFailures: number;
  deliveryRetentionDays: number;
  webhookAllowHttp: boolean;
  webhookAllowPrivateNetworks: boolean;
  webhookVerifyOwnership: boolean;
  webhookCaFile: string | undefined;
  webhookProxyUrl: string | undefined;
  rateLimitWebhookIngest: RateLimit;
  rateLimitLoginUsername: RateLimit;
  rateLimitLoginAddress: RateLimit;
  oidcIssuer: string | undefined;
  oidcClientId: string | undefined;
  oidcClientSecret: string | undefined;
  oidcName: string;
  oidcAllowSignup: boolean;
  maxUploadBytes: number;
  /** PARLEY_FILES_S3_*: unset bucket, files stay in the data directory. */
  filesS3Bucket: string | undefined;
  filesS3Endpoint: string | undefined;
  filesS3Region: string;
  filesS3AccessKeyId: string | undefined;
  filesS3SecretAccessKey: string | undefined;
  filesS3ForcePathStyle: boolean;
  dlpPolicyFile: string | undefined;
  avBlocklistFile: string | undefined;
  clamavUrl: string | undefined;
  moderationProvider: "local" | "http" | "off";
  moderationUrl: string | undefined;
  moderationApiKey: string | undefined;
  moderationFlagThreshold: number;
  moderationQuarantineThreshold: number;
  /** RTCIceServer objects handed to call participants (PARLEY_ICE_SERVERS). */
  iceServers: IceServer[];
  /** Hand PARLEY_ICE_SERVERS' static TURN credentials to users (else they are left out). */
  iceServersStaticCredentials: boolean;
  /** The TURN REST API shared secret (PARLEY_TURN_SECRET): short-lived credentials per user. */
  turnSecret: string | undefined;
  /** The URLs those credentials are for (PARLEY_TURN_URLS); undefined: PARLEY_ICE_SERVERS' turn: URLs. */
  turnUrls: string[] | undefined;
  /** Lifetime of a TURN REST credential, in seconds (PARLEY_TURN_TTL). */
  turnTtl: number;
  presenceGraceMs: number;
  presenceHeartbeatMs: number;
  streamPingIntervalMs: number;
  streamCoalesceMs: number;
  streamReauthenticateMs: number;
  streamMaxSockets: number;
  streamMaxSocketsPerAddress: number;
  streamMaxSocketsPerUser: number;
  streamFramesPerSecond: number;
  streamFrameBurst: number;
  /** The bearer token /metrics requires (PARLEY_METRICS_TOKEN); unset: /metrics is open. */
  metricsToken: string | undefined;
  logLevel: string;
  logFormat: "auto" | "pretty" | "json";
}

/** An RTCIceServer as WebRTC clients take it. */
export interface IceServer {
  urls: string | string[];
  username?: string;
  credential?: string;
}

/** Values given as `parley serve` flags, keyed by setting name; they win over the environment. */
export type ConfigOverrides = Partial<Record<SettingName, string | number | boolean | undefined>>;

const WINDOW_UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000 };

export function parseRate(variable: string, text: string): RateLimit {
  const match = /^(\d+)\s*\/\s*(\d*)\s*(s|m|h)$/.exec(text.trim());
  if (!match)
    throw new ConfigError(
      variable,
      `expected N/<window> such as 60/1m, 10/30s or 1000/1h, got "${text}"`,
    );
  const max = Number(match[1]);
  const count = match[2] === "" ? 1 : Number(match[2]);
  if (max < 1 || count < 1)
    throw new ConfigError(variable, `limit and window must be positive, got "${text}"`);
  return { max, windowMs: count * WINDOW_UNITS[match[3]!]!, text: text.trim() };
}

/** Whole-number settings for which 0 means "off". */
const ZERO_ALLOWED: ReadonlySet<SettingName> = new Set([
  "deliveryRetentionDays",
  "webhookAutoDisableAfterMs",
  "webhookAutoDisableMinFailures",
  "streamCoalesceMs",
  "streamMaxSocketsPerAddress",
  "webhookWaitSlots",
  "webhookSendThreads",
]);

function parseValue(name: SettingName, setting: Setting, raw: string): unknown {
  const variable = setting.env;
  switch (setting.kind) {
    case "string":
      return raw;
    case "port": {
      const port = Number(raw);
      if (!/^\d+$/.test(raw) || port < 0 || port > 65535) {
        throw new ConfigError(variable, `expected a port number 0-65535, got "${raw}"`);
      }
      return port;
    }
    case "int": {
      const value = Number(raw);
      if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value)) {
        throw new ConfigError(variable, `expected a whole number, got "${raw}"`);
      }
      if (value < 1 && !ZERO_ALLOWED.has(name)) {
        throw new ConfigError(variable, `must be at least 1, got "${raw}"`);
      }
      return value;
    }
    case "number": {
      const value = Number(raw);
      if (raw.trim() === "" || !Number.isFinite(value))
        throw new ConfigError(variable, `expected a number, got "${raw}"`);
      return value;
    }
    case "boolean": {
      const lowered = raw.toLowerCase();
      if (["true", "1", "yes", "on"].includes(lowered)) return true;
      if (["false", "0", "no", "off"].includes(lowered)) return false;
      throw new ConfigError(variable, `expected true or false, got "${raw}"`);
    }
    case "url": {
      try {
        new URL(raw);
      } catch {
        throw new ConfigError(variable, `expected an absolute URL, got "${raw}"`);
      }
      return raw;
    }
    case "proxy-url": {
      // Never echoed: the URL may carry the proxy's credentials.
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        throw new ConfigError(variable, "expected http://[user:password@]host:port");
      }
      if (url.protocol !== "http:" || url.pathname !== "/" || url.search !== "" || url.hash !== "")
        throw new ConfigError(
          variable,
          `expected http://[user:password@]host:port (an HTTP proxy asked to CONNECT), got a ${url.protocol.slice(0, -1)}:// URL${url.pathname !== "/" ? " with a path" : ""}`,
        );
      return raw;
    }
    case "rate":
      return parseRate(variable, raw);
    case "json":
      try {
        return JSON.parse(raw) as unknown;
      } catch (error) {
        // Not echoed: a JSON setting may hold credentials (a TURN server's), and this reaches logs.
        throw new ConfigError(variable, `expected JSON (${(error as Error).message})`);
      }
    case "enum":
      if (!setting.values!.includes(raw)) {
        throw new ConfigError(
          variable,
          `expected one of ${setting.values!.join(", ")}, got "${raw}"`,
        );
      }
      return raw;
  }
}

/** Reads every setting from flags (first), then the environment, then the default. Throws ConfigError. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: ConfigOverrides = {},
): Config {
  const out: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(SETTINGS) as [SettingName, Setting][]) {
    const fromFlag = overrides[name];
    const raw =
      fromFlag !== undefined
        ? String(fromFlag)
        : env[setting.env] !== undefined && env[setting.env] !== ""
          ? env[setting.env]
          : setting.default;
    out[name] = raw === undefined ? undefined : parseValue(name, setting, raw);
  }
  const config = out as unknown as Config;
  config.dataDir = path.resolve(config.dataDir);
  if (config.databaseUrl && !/^postgres(ql)?:\/\//.test(config.databaseUrl)) {
    throw new ConfigError("DATABASE_URL", "only postgres:// (or postgresql://) URLs are supported");
  }
  if (config.publicBaseUrl) config.publicBaseUrl = config.publicBaseUrl.replace(/\/+$/, "");
  if (config.webhookBackoffMaxMs < config.webhookBackoffBaseMs) {
    throw new ConfigError(
      "PARLEY_WEBHOOK_BACKOFF_MAX_MS",
      "must not be below PARLEY_WEBHOOK_BACKOFF_BASE_MS",
    );
  }
  if (config.httpHeadersTimeoutMs > config.httpRequestTimeoutMs) {
    throw new ConfigError(
      "PARLEY_HTTP_HEADERS_TIMEOUT_MS",
      "must not be above PARLEY_HTTP_REQUEST_TIMEOUT_MS",
    );
  }
  if (config.moderationProvider === "http" && !config.moderationUrl) {
    throw new ConfigError(
      "PARLEY_MODERATION_URL",
      "is required when PARLEY_MODERATION_PROVIDER=http",
    );
  }
  if (!(
    config.moderationFlagThreshold > 0 &&
    config.moderationFlagThreshold <= config.moderationQuarantineThreshold &&
    config.moderationQuarantineThreshold <= 1
  )) {
    throw new ConfigError(
      "PARLEY_MODERATION_FLAG_THRESHOLD",
      "thresholds must satisfy 0 < flag <= quarantine <= 1",
    );
  }
  config.iceServers = parseIceServers(config.iceServers as unknown);
  config.turnUrls = parseTurnUrls(config.turnUrls as unknown as string | undefined);
  config.turnTtl = parseTurnTtl(config.turnTtl as unknown as string);
  if (config.turnSecret !== undefined) {
    if (config.turnSecret.length < 32)
      throw new ConfigError("PARLEY_TURN_SECRET", "must be at least 32 characters");
    const urls = config.turnUrls ?? config.iceServers.flatMap((server) => turnUrlsOf(server));
    if (urls.length === 0)
      throw new ConfigError(
        "PARLEY_TURN_SECRET",
        "needs PARLEY_TURN_URLS, or a turn: or turns: URL in PARLEY_ICE_SERVERS",
      );
  }
  const oidc = [config.oidcIssuer, config.oidcClientId, config.oidcClientSecret];
  if (oidc.some((value) => value !== undefined) && !oidc.every((value) => value !== undefined)) {
    throw new ConfigError(
      "PARLEY_OIDC_ISSUER",
      "single sign-on needs PARLEY_OIDC_ISSUER, PARLEY_OIDC_CLIENT_ID and PARLEY_OIDC_CLIENT_SECRET together",
    );
  }
  if (config.jwtSecret !== undefined && config.jwtSecret.length < 32) {
    throw new ConfigError("PARLEY_JWT_SECRET", "must be at least 32 characters");
  }
  if (config.metricsToken !== undefined && config.metricsToken.length < 16) {
    throw new ConfigError("PARLEY_METRICS_TOKEN", "must be at least 16 characters");
  }
  if (config.masterKey !== undefined && config.masterKeyFile !== undefined) {
    throw new ConfigError(
      "PARLEY_MASTER_KEY_FILE",
      "set either PARLEY_MASTER_KEY or this, not both",
    );
  }
  if ((config.filesS3AccessKeyId === undefined) !== (config.filesS3SecretAccessKey === undefined)) {
    throw new ConfigError(
      config.filesS3AccessKeyId === undefined
        ? "PARLEY_FILES_S3_ACCESS_KEY_ID"
        : "PARLEY_FILES_S3_SECRET_ACCESS_KEY",
      "set both PARLEY_FILES_S3_ACCESS_KEY_ID and PARLEY_FILES_S3_SECRET_ACCESS_KEY, or neither",
    );
  }
  if (config.secretKey !== undefined && !/^[0-9a-fA-F]{64}$/.test(config.secretKey)) {
    throw new ConfigError("PARLEY_SECRET_KEY", "must be 64 hex characters (a 256-bit key)");
  }
  return config;
}

function parseIceServers(value: unknown): IceServer[] {
  const fail = (why: string): never => {
    throw new ConfigError(
      "PARLEY_ICE_SERVERS",
      `expected a JSON array of RTCIceServer objects: ${why}`,
    );
  };
  if (!Array.isArray(value)) fail("not an array");
  return (value as unknown[]).map((entry, index) => {
    if (typeof entry !== "object" || entry === null) return fail(`entry ${index} is not an object`);
    const { urls, username, credential } = entry as Record<string, unknown>;
    const list = typeof urls === "string" ? [urls] : urls;
    if (
      !Array.isArray(list) ||
      list.length === 0 ||
      !list.every((url) => typeof url === "string" && /^(stun|stuns|turn|turns):/.test(url))
    )
      fail(`entry ${index} needs urls: stun:, stuns:, turn: or turns: URLs`);
    if (username !== undefined && typeof username !== "string")
      fail(`entry ${index}: username must be a string`);
    if (credential !== undefined && typeof credential !== "string")
      fail(`entry ${index}: credential must be a string`);
    const server: IceServer = { urls: urls as string | string[] };
    if (username !== undefined) server.username = username as string;
    if (credential !== undefined) server.credential = credential as string;
    return server;
  });
}

const TURN_URL = /^turns?:/;

/** The turn: and turns: URLs of an ICE server entry. */
export function turnUrlsOf(server: IceServer): string[] {
  return (typeof server.urls === "string" ? [server.urls] : server.urls).filter((url) =>
    TURN_URL.test(url),
  );
}

function parseTurnUrls(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const urls = raw
    .split(",")
    .map((url) => url.trim())
    .filter((url) => url !== "");
  if (urls.length === 0 || !urls.every((url) => TURN_URL.test(url)))
    throw new ConfigError("PARLEY_TURN_URLS", "expected comma-separated turn: or turns: URLs");
  return urls;
}

const TTL_UNITS: Record<string, number> = { "": 1, s: 1, m: 60, h: 3600 };

/** "3600", "3600s", "60m", "1h" → seconds, from 60 s to 168 h. */
function parseTurnTtl(raw: string): number {
  const match = /^(\d+)\s*(s|m|h|)$/.exec(raw.trim());
  const seconds = match ? Number(match[1]) * TTL_UNITS[match[2]!]! : NaN;
  if (!(seconds >= 60 && seconds <= 168 * 3600))
    throw new ConfigError(
      "PARLEY_TURN_TTL",
      `expected seconds, or a number with s, m or h, from 60s to 168h; got "${raw}"`,
    );
  return seconds;
}
