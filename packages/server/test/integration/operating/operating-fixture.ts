import type { LightMyRequestResponse } from "fastify";
import { onTestFinished } from "vitest";
import type { ConfigOverrides } from "../../../src/config/load-config.js";
import type { TestDialect } from "../../helpers/dialects.js";
import { startReceiver, type Receiver } from "../../helpers/receiver.js";
import { startDeliveryApp, type DeliveryApp } from "../delivery/delivery-fixture.js";

/** An endpoint as the admin API answers it. */
export interface WebhookJson {
  id: number;
  name: string;
  events: string[];
  enabled: boolean;
  signatureScheme: string;
  roomIds: number[] | null;
  headers: Record<string, string>;
  maxDeliveriesPerSecond: number | null;
  disabledReason: string | null;
  disabledAt: string | null;
  health: {
    attempts24h: number;
    successRate24h: number | null;
    p50LatencyMs24h: number | null;
    p95LatencyMs24h: number | null;
    lastSuccessAt: string | null;
    lastFailureAt: string | null;
    lastError: string | null;
    consecutiveFailures: number;
  };
}

export interface OperatingApp extends DeliveryApp {
  api(
    method: "GET" | "POST" | "PATCH" | "DELETE",
    url: string,
    payload?: object,
  ): Promise<LightMyRequestResponse>;
  /** Creates an endpoint through the admin API (fails the test unless 201). */
  create(body: Record<string, unknown>): Promise<WebhookJson>;
  /** A receiver closed when the test ends. */
  receiver(): Promise<Receiver>;
}

export async function startOperatingApp(
  dialect: TestDialect,
  overrides: ConfigOverrides = {},
): Promise<OperatingApp> {
  const d = await startDeliveryApp(dialect, overrides);
  const api: OperatingApp["api"] = (method, url, payload) =>
    d.t.app.inject({
      method,
      url,
      headers: d.t.admin.headers,
      ...(payload === undefined ? {} : { payload }),
    });
  return {
    ...d,
    api,
    async create(body) {
      const res = await api("POST", "/api/admin/webhooks", {
        name: "Operated",
        secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        events: ["ADMIN_USER_DISABLED"],
        ...body,
      });
      if (res.statusCode !== 201) throw new Error(`create answered ${res.statusCode}: ${res.body}`);
      return res.json() as WebhookJson;
    },
    async receiver() {
      const started = await startReceiver();
      onTestFinished(() => started.close());
      return started;
    },
  };
}
