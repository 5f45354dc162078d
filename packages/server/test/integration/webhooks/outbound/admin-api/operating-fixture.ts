import type { CreateWebhookParams, Webhook } from "@parley/client";
import type { LightMyRequestResponse } from "fastify";
import { onTestFinished } from "vitest";
import type { ConfigOverrides } from "../../../../../src/config/load-config.js";
import type { TestDialect } from "../../../../helpers/dialects.js";
import { apiFor } from "../../../../helpers/fixtures.js";
import { startReceiver, type Receiver } from "../../../../helpers/receiver.js";
import { startDeliveryApp, type DeliveryApp } from "../delivery-engine/delivery-fixture.js";

export interface OperatingApp extends DeliveryApp {
  api(
    method: "GET" | "POST" | "PATCH" | "DELETE",
    url: string,
    payload?: object,
  ): Promise<LightMyRequestResponse>;
  /** Creates an endpoint through the admin API (a `RequestError` unless it answers 201). */
  create(body: Record<string, unknown>): Promise<Webhook>;
  /** A receiver closed when the test ends. */
  receiver(): Promise<Receiver>;
}

export async function startOperatingApp(
  dialect: TestDialect,
  overrides: ConfigOverrides = {},
  options: Parameters<typeof startDeliveryApp>[2] = {},
): Promise<OperatingApp> {
  const d = await startDeliveryApp(dialect, overrides, options);
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
      const { data } = await apiFor(d.t)("POST /api/admin/webhooks", {
        data: {
          name: "Operated",
          secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
          events: ["ADMIN_USER_DISABLED"],
          ...body,
        } as CreateWebhookParams,
      });
      return data;
    },
    async receiver() {
      const started = await startReceiver();
      onTestFinished(() => started.close());
      return started;
    },
  };
}
