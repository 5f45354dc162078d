import { request, type RequestInterface } from "@parley/client";
import { startDeliveryWork, type BackgroundWork } from "../../../src/background-work.js";
import type { ConfigOverrides } from "../../../src/config/load-config.js";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import type { TestDialect } from "../../helpers/dialects.js";
import { FAST_KNOBS } from "../../helpers/knobs.js";

export interface ClientApp {
  readonly t: TestApp;
  /** The real server's address, e.g. http://127.0.0.1:40123. */
  readonly baseUrl: string;
  /** `request` bound to the server and the admin's token. */
  readonly admin: RequestInterface;
  /** `request` bound to the server and `user`'s token. */
  as(user: TestUser): RequestInterface;
  close(): Promise<void>;
}

/**
 * A real Parley server on a loopback port, for the client to call over HTTP. With
 * `deliveries: true` the dispatcher runs too, so webhooks are really delivered.
 */
export async function startClientApp(
  dialect: TestDialect,
  options: { deliveries?: boolean; config?: ConfigOverrides } = {},
): Promise<ClientApp> {
  const t = await createTestApp(dialect, { ...FAST_KNOBS, ...options.config });
  const baseUrl = await t.app.listen({ port: 0, host: "127.0.0.1" });
  const background: BackgroundWork[] = options.deliveries
    ? startDeliveryWork(t.ctx, t.app.metrics)
    : [];
  const api = request.defaults({ baseUrl });
  const as = (user: TestUser) =>
    api.defaults({ headers: { authorization: `Bearer ${user.token}` } });
  return {
    t,
    baseUrl,
    admin: as(t.admin),
    as,
    async close() {
      await t.app.close();
      await Promise.all(background.map((work) => work.stop()));
      await t.close();
    },
  };
}
