import { SETTINGS } from "../../src/config/config-schema.js";
import type { ConfigOverrides } from "../../src/config/load-config.js";

/**
 * Delivery settings that run the whole state machine in a couple of seconds: five attempts with
 * back-off 100, 200, 400, 800 ms (ceiling 1 s), a 1 s time-out and so a 7 s lease
 * (leaseFor: 2 x time-out + 5 s), a sweep every 300 ms. One set for in-process apps
 * (createTestApp overrides) and, through `asEnv`, for `parley serve` children.
 */
export const FAST_KNOBS = {
  webhookTimeoutMs: 1_000,
  webhookBackoffBaseMs: 100,
  webhookBackoffMaxMs: 1_000,
  webhookSweepIntervalMs: 300,
  webhookConcurrency: 16,
  webhookPerEndpointConcurrency: 8,
} as const satisfies ConfigOverrides;

/** Settings as the environment variables `parley serve` reads (PARLEY_WEBHOOK_TIMEOUT_MS=1000). */
export function asEnv(overrides: ConfigOverrides): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(overrides)) {
    if (value !== undefined) env[SETTINGS[name as keyof typeof SETTINGS].env] = String(value);
  }
  return env;
}

/** FAST_KNOBS for a child process. */
export const FAST_ENV: Record<string, string> = asEnv(FAST_KNOBS);
