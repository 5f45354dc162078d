import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/config/config-error.js";
import { SETTINGS } from "../../../src/config/config-schema.js";
import { loadConfig, parseRate } from "../../../src/config/load-config.js";

describe("loadConfig", () => {
  it("uses the documented defaults when nothing is set", () => {
    const config = loadConfig({});
    expect(config.port).toBe(8080);
    expect(config.host).toBe("127.0.0.1");
    expect(config.edition).toBe("enterprise");
    expect(config.webhookTimeoutMs).toBe(30_000);
    expect(config.webhookMaxAttempts).toBe(5);
    expect(config.webhookBackoffBaseMs).toBe(30_000);
    expect(config.webhookBackoffMaxMs).toBe(3_600_000);
    expect(config.webhookSweepIntervalMs).toBe(60_000);
    expect(config.deliveryRetentionDays).toBe(30);
    expect(config.webhookAllowHttp).toBe(false);
    expect(config.webhookAllowPrivateNetworks).toBe(false);
    expect(config.rateLimitWebhookIngest).toEqual({ max: 60, windowMs: 60_000, text: "60/1m" });
    expect(config.maxUploadBytes).toBe(26_214_400);
    expect(config.databaseUrl).toBeUndefined();
  });

  it("reads the environment, and flags win over it", () => {
    const env = {
      PARLEY_PORT: "9001",
      PARLEY_WEBHOOK_ALLOW_HTTP: "true",
      PARLEY_EDITION: "community",
    };
    expect(loadConfig(env).port).toBe(9001);
    expect(loadConfig(env).webhookAllowHttp).toBe(true);
    expect(loadConfig(env).edition).toBe("community");
    expect(loadConfig(env, { port: "9002" }).port).toBe(9002);
  });

  it.each([
    ["PARLEY_PORT", "abc"],
    ["PARLEY_PORT", "70000"],
    ["PARLEY_EDITION", "gold"],
    ["PARLEY_WEBHOOK_TIMEOUT_MS", "-5"],
    ["PARLEY_WEBHOOK_ALLOW_HTTP", "maybe"],
    ["PARLEY_RATE_LIMIT_WEBHOOK_INGEST", "lots"],
    ["DATABASE_URL", "mysql://localhost/db"],
    ["PARLEY_SECRET_KEY", "short"],
    ["PARLEY_JWT_SECRET", "too-short"],
  ])("rejects %s=%s with an error naming the variable", (variable, value) => {
    let error: unknown;
    try {
      loadConfig({ [variable]: value });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(variable);
    expect((error as ConfigError).variable).toBe(variable);
  });

  it("parses rate policies in seconds, minutes and hours", () => {
    expect(parseRate("X", "10/30s")).toEqual({ max: 10, windowMs: 30_000, text: "10/30s" });
    expect(parseRate("X", "1000/1h")).toEqual({ max: 1000, windowMs: 3_600_000, text: "1000/1h" });
    expect(parseRate("X", "5/m")).toEqual({ max: 5, windowMs: 60_000, text: "5/m" });
  });

  it("names every environment variable and flag once", () => {
    const envs = Object.values(SETTINGS).map((s) => s.env);
    const flags = Object.values(SETTINGS).map((s) => s.flag);
    expect(new Set(envs).size).toBe(envs.length);
    expect(new Set(flags).size).toBe(flags.length);
  });
});

describe(".env.example", () => {
  it("lists every setting with its default", async () => {
    const fs = await import("node:fs");
    const text = fs.readFileSync(new URL("../../../../../.env.example", import.meta.url), "utf8");
    for (const setting of Object.values(SETTINGS)) {
      const line = "default" in setting ? `${setting.env}=${setting.default}` : `# ${setting.env}=`;
      expect(text.split("\n")).toContain(line);
    }
  });
});

describe("PARLEY_ICE_SERVERS", () => {
  it("defaults to no ICE servers and reads a JSON array of RTCIceServer objects", () => {
    expect(loadConfig({}).iceServers).toEqual([]);
    const servers = [
      { urls: "stun:stun.example.org:3478" },
      { urls: ["turn:turn.example.org:3478"], username: "u", credential: "c" },
    ];
    expect(loadConfig({ PARLEY_ICE_SERVERS: JSON.stringify(servers) }).iceServers).toEqual(servers);
  });

  it.each([
    ["not JSON", "stun:x"],
    ["not an array", '{"urls":"stun:x"}'],
    ["an entry without urls", '[{"username":"u"}]'],
    ["a URL that is not stun/turn", '[{"urls":"https://x"}]'],
    ["a credential that is not a string", '[{"urls":"turn:x","credential":1}]'],
  ])("refuses %s, naming the variable", (_why, value) => {
    expect(() => loadConfig({ PARLEY_ICE_SERVERS: value })).toThrow(/PARLEY_ICE_SERVERS/);
  });

  it("does not repeat a value that is not JSON, which may hold a TURN credential", () => {
    const value = '[{"urls":"turn:x","credential":"s3cret-turn-pass"'; // cut short
    expect(() => loadConfig({ PARLEY_ICE_SERVERS: value })).toThrow(/PARLEY_ICE_SERVERS.*JSON/);
    expect(() => loadConfig({ PARLEY_ICE_SERVERS: value })).not.toThrow(/s3cret-turn-pass/);
  });
});

describe("PARLEY_METRICS_TOKEN", () => {
  it("is unset by default, and refused under 16 characters", () => {
    expect(loadConfig({}).metricsToken).toBeUndefined();
    expect(loadConfig({ PARLEY_METRICS_TOKEN: "x".repeat(16) }).metricsToken).toBe("x".repeat(16));
    expect(() => loadConfig({ PARLEY_METRICS_TOKEN: "short" })).toThrow(/PARLEY_METRICS_TOKEN/);
  });
});

describe("PARLEY_TURN_SECRET, PARLEY_TURN_URLS, PARLEY_TURN_TTL", () => {
  const secret = "x".repeat(32);

  it("defaults to no secret, no URLs of its own, a 1 hour TTL and no static credentials", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ turnSecret: undefined, turnUrls: undefined, turnTtl: 3600 });
    expect(config.iceServersStaticCredentials).toBe(false);
  });

  it("reads the TTL in seconds or with a unit, and the URLs comma-separated", () => {
    expect(loadConfig({ PARLEY_TURN_TTL: "90" }).turnTtl).toBe(90);
    expect(loadConfig({ PARLEY_TURN_TTL: "15m" }).turnTtl).toBe(900);
    expect(loadConfig({ PARLEY_TURN_TTL: "2h" }).turnTtl).toBe(7200);
    const urls = "turn:a.example.org:3478, turns:b.example.org:5349";
    expect(loadConfig({ PARLEY_TURN_SECRET: secret, PARLEY_TURN_URLS: urls }).turnUrls).toEqual([
      "turn:a.example.org:3478",
      "turns:b.example.org:5349",
    ]);
  });

  it.each([
    ["PARLEY_TURN_TTL", { PARLEY_TURN_TTL: "59s" }],
    ["PARLEY_TURN_TTL", { PARLEY_TURN_TTL: "169h" }],
    ["PARLEY_TURN_TTL", { PARLEY_TURN_TTL: "1d" }],
    ["PARLEY_TURN_URLS", { PARLEY_TURN_URLS: "stun:a.example.org" }],
    ["PARLEY_TURN_SECRET", { PARLEY_TURN_SECRET: "short", PARLEY_TURN_URLS: "turn:a" }],
    ["PARLEY_TURN_SECRET", { PARLEY_TURN_SECRET: secret }], // no TURN URL anywhere
  ])("refuses a bad %s", (variable, env) => {
    expect(() => loadConfig(env)).toThrow(new RegExp(variable));
  });

  it("takes the secret's URLs from PARLEY_ICE_SERVERS when PARLEY_TURN_URLS is unset", () => {
    const iceServers = JSON.stringify([{ urls: "turn:a.example.org:3478" }]);
    expect(() =>
      loadConfig({ PARLEY_TURN_SECRET: secret, PARLEY_ICE_SERVERS: iceServers }),
    ).not.toThrow();
  });
});

describe("PARLEY_WEBHOOK_PROXY_URL", () => {
  it("takes an http:// proxy, with credentials or not", () => {
    expect(loadConfig({ PARLEY_WEBHOOK_PROXY_URL: "http://proxy:3128" }).webhookProxyUrl).toBe(
      "http://proxy:3128",
    );
    expect(loadConfig({ PARLEY_WEBHOOK_PROXY_URL: "http://u:p@proxy:3128" }).webhookProxyUrl).toBe(
      "http://u:p@proxy:3128",
    );
  });

  it.each([
    "https://u:s3cret-proxy@proxy:3128",
    "http://u:s3cret-proxy@proxy:3128/x",
    "u:s3cret-proxy@@",
  ])("refuses %s without echoing its credentials", (value) => {
    expect(() => loadConfig({ PARLEY_WEBHOOK_PROXY_URL: value })).toThrow(
      /PARLEY_WEBHOOK_PROXY_URL: expected http:\/\/\[user:password@\]host:port/,
    );
    expect(() => loadConfig({ PARLEY_WEBHOOK_PROXY_URL: value })).not.toThrow(/s3cret-proxy/);
  });
});
