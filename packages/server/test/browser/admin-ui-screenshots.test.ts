/**
 * Screenshots of the admin UI's webhook pages for the docs (docs/screenshots/): the webhook list
 * with each endpoint's health and the banner for one Parley disabled, one endpoint with its health
 * and delivery log, one delivery with its header tabs, and the delivery search. Written to the
 * folder PARLEY_DOC_SCREENSHOTS names, e.g.
 * `PARLEY_DOC_SCREENSHOTS=docs/screenshots/after npx vitest run packages/server/test/browser/admin-ui-screenshots.test.ts`.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDeliveryWork, type BackgroundWork } from "../../src/background-work.js";
import { createTestApp, type TestApp } from "../helpers/build-app.js";
import { SQLITE } from "../helpers/dialects.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";
import { CHROMIUM_PATH } from "../helpers/services.js";

const BUILD_SCRIPT = fileURLToPath(new URL("../../scripts/build-admin-ui.mjs", import.meta.url));
/**
 * Where the screenshots go: test-results/doc-screenshots (a test artifact) unless
 * PARLEY_DOC_SCREENSHOTS names another folder (docs/screenshots/after, to update the docs).
 */
const OUT =
  process.env.PARLEY_DOC_SCREENSHOTS ??
  fileURLToPath(new URL("../../../../test-results/doc-screenshots", import.meta.url));

describe("admin UI doc screenshots", { tags: ["chromium"] }, () => {
  let t: TestApp;
  let work: BackgroundWork[];
  let receiver: Receiver;
  let origin: string;

  beforeAll(async () => {
    await promisify(execFile)(process.execPath, [BUILD_SCRIPT]);
    [t, receiver] = await Promise.all([createTestApp(SQLITE), startReceiver()]);
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    work = startDeliveryWork(t.ctx, t.app.metrics);
  });
  afterAll(async () => {
    for (const part of work ?? []) await part.stop();
    await receiver?.close();
    await t?.close();
  });

  async function api<T>(method: string, url: string, payload?: object): Promise<T> {
    const res = await t.app.inject({
      method: method as "GET",
      url,
      headers: t.admin.headers,
      ...(payload === undefined ? {} : { payload }),
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return (res.body === "" ? undefined : res.json()) as T;
  }

  it("takes the webhook list, endpoint, delivery and search pages", async () => {
    const dir = path.resolve(OUT);
    fs.mkdirSync(dir, { recursive: true });
    const audit = await api<{ id: number }>("POST", "/api/admin/webhooks", {
      name: "Audit sink",
      url: receiver.url,
      secret: "a-receiver-secret-0123456789",
      events: [
        "MESSAGE_CREATED",
        "ROOM_CREATED",
        "ROOM_DELETED",
        "USER_JOINED_ROOM",
        "USER_LEFT_ROOM",
        "FILE_UPLOADED",
      ],
    });
    await api("POST", "/api/admin/webhooks", {
      name: "Billing integration with a rather long name",
      url: `${receiver.url}a/very/long/path/that/keeps/going/to/show/how/urls/wrap/in/the/table`,
      secret: "a-receiver-secret-0123456789",
      events: ["ADMIN_USER_DISABLED"],
      enabled: false,
    });
    const gone = await api<{ id: number }>("POST", "/api/admin/webhooks", {
      name: "Old CRM bridge",
      url: `${receiver.origin}/retired`,
      secret: "a-receiver-secret-0123456789",
      events: ["ROOM_CREATED"],
    });
    receiver.respondWith((req) =>
      req.path === "/retired"
        ? { status: 410, body: "this integration was removed" }
        : { status: 500, body: '{"error":"database unavailable"}' },
    );
    const { deliveryId: failed } = await api<{ deliveryId: number }>(
      "POST",
      `/api/admin/webhooks/${audit.id}/test`,
    );
    await api("POST", `/api/admin/webhooks/${gone.id}/test`);
    /** Waits until the delivery had its first attempt and its status satisfies `done`. */
    const settled = async (id: number, deliveryId: number, done: (status: string) => boolean) => {
      await expect
        .poll(async () => {
          const d = await api<{ status: string; attempts: number }>(
            "GET",
            `/api/admin/webhooks/${id}/deliveries/${deliveryId}`,
          );
          return d.attempts > 0 && done(d.status);
        })
        .toBe(true);
    };
    await settled(audit.id, failed, (status) => status !== "PENDING");
    await expect
      .poll(
        async () =>
          (await api<{ disabledReason: string | null }>("GET", `/api/admin/webhooks/${gone.id}`))
            .disabledReason,
      )
      .toBe("gone");
    receiver.respondWith(() => ({
      status: 200,
      body: '{"ok":true}',
      headers: { "x-request-id": "req_7f3a9c" },
    }));
    for (let i = 0; i < 3; i++) {
      const { deliveryId } = await api<{ deliveryId: number }>(
        "POST",
        `/api/admin/webhooks/${audit.id}/test`,
      );
      await settled(audit.id, deliveryId, (status) => status === "SUCCESS");
    }

    const browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    try {
      for (const [width, suffix] of [
        [1280, ""],
        [420, "-420px"],
      ] as const) {
        const context = await browser.newContext({ viewport: { width, height: 800 } });
        const page = await context.newPage();
        await page.goto(`${origin}/admin/`);
        await page.getByText("Use a token instead").click();
        await page.locator("#token").fill(t.admin.token);
        await page.getByRole("button", { name: "Sign in with the token" }).click();
        await page.locator("#webhooks").waitFor();
        await page.locator("#auto-disabled").waitFor();
        await page.screenshot({ path: `${dir}/webhook-list${suffix}.png`, fullPage: true });
        await page.goto(`${origin}/admin/webhooks/${audit.id}`);
        await page.locator("#deliveries tbody tr").first().waitFor();
        await page.screenshot({ path: `${dir}/endpoint-detail${suffix}.png`, fullPage: true });
        await page.goto(`${origin}/admin/webhooks/${audit.id}/deliveries/${failed}`);
        await page.locator("#payload").waitFor();
        await page.getByRole("tab", { name: "Response headers" }).first().waitFor();
        await page.screenshot({ path: `${dir}/delivery-detail${suffix}.png`, fullPage: true });
        await page.goto(`${origin}/admin/deliveries?status=SUCCESS`);
        await page.locator("#search-results tbody tr").first().waitFor();
        await page.screenshot({ path: `${dir}/delivery-search${suffix}.png`, fullPage: true });
        await context.close();
      }
    } finally {
      await browser.close();
    }
  }, 60_000);
});
