import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load-config.js";
import { weakenedGuards } from "../../../src/config/weakened-guards.js";

const warningsFor = (env: Record<string, string>) => weakenedGuards(loadConfig(env));

describe("the settings a start warns about", () => {
  it("warns of none with the defaults", () => {
    expect(warningsFor({})).toEqual([]);
  });

  it("names each setting that turns a guard off, in one sentence each", () => {
    expect(
      warningsFor({
        PARLEY_WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
        PARLEY_WEBHOOK_ALLOW_HTTP: "true",
        PARLEY_STREAM_MAX_SOCKETS_PER_ADDRESS: "0",
        PARLEY_ICE_SERVERS_STATIC_CREDENTIALS: "true",
        PARLEY_MODERATION_PROVIDER: "off",
      }).map((warning) => warning.split(/[:= ]/, 1)[0]),
    ).toEqual([
      "PARLEY_WEBHOOK_ALLOW_PRIVATE_NETWORKS",
      "PARLEY_WEBHOOK_ALLOW_HTTP",
      "PARLEY_STREAM_MAX_SOCKETS_PER_ADDRESS",
      "PARLEY_ICE_SERVERS_STATIC_CREDENTIALS",
      "PARLEY_MODERATION_PROVIDER",
    ]);
  });

  it("warns of plain keys in the database only with PostgreSQL", () => {
    expect(warningsFor({ PARLEY_INSECURE_KEYS_IN_DATABASE: "true" })).toEqual([]);
    expect(
      warningsFor({
        PARLEY_INSECURE_KEYS_IN_DATABASE: "true",
        DATABASE_URL: "postgres://parley@db/parley",
      }),
    ).toEqual([expect.stringContaining("generated keys are stored in plain text")]);
  });

  it("warns of cookies without Secure and an open /metrics when listening beyond loopback", () => {
    const open = warningsFor({ PARLEY_HOST: "0.0.0.0" });
    expect(open).toEqual([
      expect.stringContaining("session cookies are sent without the Secure flag"),
      expect.stringContaining("/metrics answers anyone who reaches the port"),
    ]);
    expect(
      warningsFor({
        PARLEY_HOST: "0.0.0.0",
        PARLEY_PUBLIC_BASE_URL: "https://chat.example.com",
        PARLEY_METRICS_TOKEN: "a".repeat(32),
      }),
    ).toEqual([]);
    expect(warningsFor({ PARLEY_HOST: "::1" })).toEqual([]);
  });
});
