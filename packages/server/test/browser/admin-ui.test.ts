/**
 * The admin UI in a real browser (Debian's Chromium through playwright-core) against the real
 * server: sign-in, outbound webhooks and their delivery log, inbound webhooks, the moderation
 * deep link. One browser for the file, a fresh context (so a fresh sessionStorage) per test.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startBackgroundWork, type BackgroundWork } from "../../src/background-work.js";
import { createTestApp, type TestApp } from "../helpers/build-app.js";
import { DIALECTS } from "../helpers/dialects.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";

const CHROMIUM = "/usr/bin/chromium";
const HAS_CHROMIUM = fs.existsSync(CHROMIUM);
const BUILD_SCRIPT = fileURLToPath(new URL("../../scripts/build-admin-ui.mjs", import.meta.url));
const SECRET = "a-receiver-secret-0123456789";
const XSS_NAME = "<img src=x onerror=alert(1)>";
/** Set to a folder to keep a screenshot of each page the tests reach (to review the look). */
const SCREENSHOTS = process.env.PARLEY_UI_SCREENSHOTS;

if (!HAS_CHROMIUM) {
  console.warn(
    `admin UI browser tests skipped: ${CHROMIUM} is missing (apt-get install chromium; CI installs it)`,
  );
}

describe.runIf(HAS_CHROMIUM)("admin UI in Chromium", () => {
  let t: TestApp;
  let work: BackgroundWork[];
  let receiver: Receiver;
  let browser: Browser;
  let origin: string;
  let context: BrowserContext;
  let page: Page;
  /** Dialogs (alert, confirm) and script errors, CSP violations included: none may happen. */
  let problems: string[];

  beforeAll(async () => {
    // Bundle the current sources, as `npm run build` does, so the test never runs a stale UI.
    await promisify(execFile)(process.execPath, [BUILD_SCRIPT]);
    [t, receiver, browser] = await Promise.all([
      createTestApp(DIALECTS[0]!),
      startReceiver(),
      chromium.launch({
        executablePath: CHROMIUM,
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--disable-quic",
          "--no-first-run",
        ],
      }),
    ]);
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    work = await startBackgroundWork(t.ctx, t.app.metrics);
  });

  afterAll(async () => {
    await browser?.close();
    for (const part of work ?? []) await part.stop();
    await receiver?.close();
    await t?.close();
  });

  beforeEach(async () => {
    problems = [];
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on("dialog", (dialog) => {
      problems.push(`dialog ${dialog.type()}: ${dialog.message()}`);
      void dialog.dismiss();
    });
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("console", (message) => {
      // Chromium logs every 4xx answer; the tests cause some (401, 400) on purpose.
      if (message.type() !== "error" || message.text().startsWith("Failed to load resource")) {
        return;
      }
      problems.push(`console error: ${message.text()}`);
    });
  });

  afterEach(async () => {
    await context.close();
    expect(problems).toEqual([]);
  });

  async function signIn(path = "/admin/", token = t.admin.token): Promise<void> {
    await page.goto(`${origin}${path}`);
    await page.locator("#token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
  }

  async function screenshot(name: string): Promise<void> {
    if (SCREENSHOTS) await page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });
  }

  async function api<T = unknown>(method: string, url: string, payload?: object): Promise<T> {
    const res = await t.app.inject({
      method: method as "GET",
      url,
      headers: t.admin.headers,
      ...(payload === undefined ? {} : { payload }),
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return (res.body === "" ? undefined : res.json()) as T;
  }

  it("refuses a wrong token, signs in with the admin token, and signs out", async () => {
    await signIn("/admin/", "not-a-token");
    await expect.poll(() => page.locator("#sign-in-error").textContent()).toContain("not accepted");
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);

    await page.locator("#token").fill(`Bearer ${t.admin.token}\n`);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Outbound webhooks" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/admin/webhooks");
    expect(await page.evaluate(() => sessionStorage.getItem("parley.admin.token"))).toBe(
      t.admin.token,
    );

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.locator("#token").waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);

    // A token the server stops accepting mid-session leads back to sign-in with the reason.
    await page.evaluate(() => sessionStorage.setItem("parley.admin.token", "expired.token.here"));
    await page.goto(`${origin}/admin/inbound`);
    await expect
      .poll(() => page.locator("#sign-in-error").textContent())
      .toContain("no longer accepts your token");
  });

  it("creates a webhook through the form, shows API validation errors, renders names as text", async () => {
    await signIn();
    await page.getByRole("heading", { name: "Outbound webhooks" }).waitFor();
    await page.locator("#webhook-name").fill(XSS_NAME);
    await page.locator("#webhook-url").fill(receiver.url);
    await page.locator("#webhook-secret").fill("too-short");
    await page.locator("#event-MESSAGE_CREATED").check();
    await page.getByRole("button", { name: "Create webhook" }).click();
    const formError = page.locator("#webhook-form-error");
    await formError.waitFor();
    expect(await formError.textContent()).toMatch(/secret/i);
    expect(await api<{ items: unknown[] }>("GET", "/api/admin/webhooks")).toMatchObject({
      items: [],
    });

    await page.locator("#webhook-secret").fill(SECRET);
    await page.getByRole("button", { name: "Create webhook" }).click();
    const created = page.locator("#webhooks tbody tr");
    await created.first().waitFor();
    expect(await created.count()).toBe(1);
    // The markup is shown as the name it is: no <img> was created, nothing ran.
    expect(await page.getByRole("link", { name: XSS_NAME }).textContent()).toBe(XSS_NAME);
    expect(await page.locator("#webhooks img").count()).toBe(0);
    expect(await page.locator("#flash").textContent()).toContain(XSS_NAME);
    expect(await created.first().textContent()).toContain(receiver.url);

    const { items } = await api<{ items: { name: string; url: string; events: string[] }[] }>(
      "GET",
      "/api/admin/webhooks",
    );
    expect(items).toMatchObject([
      { name: XSS_NAME, url: receiver.url, events: ["MESSAGE_CREATED"] },
    ]);
    await screenshot("webhooks");
  });

  it("sends a test event and follows it through the delivery log to SUCCESS", async () => {
    const webhook = await api<{ id: number }>("POST", "/api/admin/webhooks", {
      name: "Audit sink",
      url: receiver.url,
      secret: SECRET,
      events: ["ROOM_CREATED"],
    });
    receiver.respondWith(() => ({ status: 200, body: '{"ok":true,"note":"<b>bold</b>"}' }));
    const before = receiver.requests.length;
    await signIn(`/admin/webhooks/${webhook.id}`);
    await page.getByRole("heading", { name: "Audit sink" }).waitFor();
    await page.getByRole("heading", { name: "Delivery log" }).waitFor();
    await page.getByRole("button", { name: "Send test event" }).click();
    const rows = page.locator("#deliveries tbody tr");
    await rows.first().waitFor();
    expect(await rows.first().textContent()).toContain("WEBHOOK_TEST");

    const [request] = (await receiver.waitForRequests(before + 1)).slice(before);
    expect(JSON.parse(request!.body.toString("utf8"))).toMatchObject({ event: "WEBHOOK_TEST" });
    await expect
      .poll(
        async () => {
          await page.getByRole("button", { name: "Refresh" }).click();
          return page.locator("#deliveries tbody tr").first().getAttribute("data-status");
        },
        { timeout: 10_000 },
      )
      .toBe("SUCCESS");

    await page.locator("#delivery-status").selectOption("FAILED");
    await page.locator("#deliveries + .empty:not([hidden])").waitFor();

    await page.locator("#delivery-status").selectOption("SUCCESS");
    await rows.first().getByRole("link").click();
    await page.locator("#payload").waitFor();
    expect(JSON.parse((await page.locator("#payload").textContent())!)).toMatchObject({
      event: "WEBHOOK_TEST",
      webhookId: webhook.id,
    });
    const attempt = page.locator("#attempts tbody tr").first();
    expect(await attempt.textContent()).toContain("200");
    expect(await attempt.locator("pre.body").textContent()).toBe(
      '{"ok":true,"note":"<b>bold</b>"}',
    );
    expect(await page.locator("#attempts b").count()).toBe(0);
    await screenshot("delivery");

    await page.getByRole("button", { name: "Redeliver" }).click();
    await page.waitForURL(/\/deliveries\/\d+$/);
    await page.getByRole("heading", { name: /^Delivery \d+$/ }).waitFor();
    await receiver.waitForRequests(before + 2);
    receiver.respondWith(() => ({ status: 204 }));
  });

  it("shows the Enterprise notice when outbound webhooks answer enterprise_required", async () => {
    await page.route("**/api/admin/webhooks*", (route) =>
      route.fulfill({
        status: 403,
        contentType: "application/problem+json",
        body: JSON.stringify({
          type: "https://parley.dev/errors/enterprise_required",
          title: "This feature needs the Enterprise edition",
          status: 403,
          detail: "outbound webhooks need the Enterprise edition (PARLEY_EDITION=enterprise)",
          code: "enterprise_required",
        }),
      }),
    );
    await signIn();
    await page.locator("#enterprise-required").waitFor();
    expect(await page.locator("#enterprise-required").textContent()).toContain(
      "Enterprise edition",
    );
    expect(await page.locator("#webhook-form").count()).toBe(0);
  });

  it("shows an inbound webhook's URL once, then only the token's last 8 characters", async () => {
    const room = await api<{ id: number }>("POST", "/api/rooms", { name: "deploys" });
    await signIn("/admin/inbound");
    await page.getByRole("heading", { name: "Inbound webhooks" }).waitFor();
    await page.locator("#inbound-room").fill(String(room.id));
    await page.locator("#inbound-name").fill("CI <script>alert(2)</script>");
    await page.getByRole("button", { name: "Create inbound webhook" }).click();

    const url = await page.locator("#ingest-url").inputValue();
    expect(url).toMatch(/\/api\/public\/webhooks\/ingest\/[A-Za-z0-9_-]{43}$/);
    expect(await page.locator("#token-reveal").textContent()).toContain("only time");
    await screenshot("inbound");
    const token = url.slice(-43);
    const listed = page.locator("#inbound-webhooks tbody tr");
    await listed.first().waitFor();
    expect(await listed.first().locator(".token-hint").textContent()).toBe(`…${token.slice(-8)}`);
    expect(await listed.first().textContent()).toContain("CI <script>alert(2)</script>");
    expect(await listed.first().textContent()).not.toContain(token);

    // The URL works, and leaving the page forgets it.
    const posted = await t.app.inject({
      method: "POST",
      url: new URL(url).pathname,
      payload: { content: "build green" },
    });
    expect(posted.statusCode).toBe(200);
    await page.reload();
    await listed.first().waitFor();
    expect(await page.locator("#token-reveal").count()).toBe(0);
    expect(await page.content()).not.toContain(token);

    // Rotating shows the new URL once; the old one stops working.
    await listed.first().getByRole("button", { name: "Rotate token" }).click();
    await page.getByRole("button", { name: "Confirm: rotate token" }).click();
    const rotated = await page.locator("#ingest-url").inputValue();
    expect(rotated).not.toBe(url);
    const old = await t.app.inject({
      method: "POST",
      url: new URL(url).pathname,
      payload: { content: "x" },
    });
    expect(old.statusCode).toBe(404);
  });

  it("opens a flag from its deep link, after sign-in, and approves it", async () => {
    const room = await api<{ id: number }>("POST", "/api/rooms", { name: "general" });
    await api("POST", `/api/rooms/${room.id}/messages`, {
      content: "you are a worthless idiot",
    });
    const { items } = await api<{ items: { id: number; reviewStatus: string }[] }>(
      "GET",
      "/api/admin/moderation/flags?status=pending",
    );
    expect(items.length).toBeGreaterThan(0);
    const flag = items.at(-1)!;

    await signIn(`/admin/moderation/${flag.id}`);
    await page.getByRole("heading", { name: `Moderation flag ${flag.id}` }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/admin/moderation/${flag.id}`);
    expect(await page.locator("#flag").textContent()).toContain("harassment");
    await expect
      .poll(() => page.locator("#message-content").textContent())
      .toContain("worthless idiot");

    await screenshot("flag");
    await page.getByRole("button", { name: "Approve" }).click();
    await expect.poll(() => page.locator("#review-status").textContent()).toBe("approved");
    const after = await api<{ items: { id: number; reviewStatus: string; reviewedBy: string }[] }>(
      "GET",
      "/api/admin/moderation/flags?status=approved",
    );
    expect(after.items.find((item) => item.id === flag.id)).toMatchObject({
      reviewStatus: "approved",
      reviewedBy: t.admin.username,
    });

    // The queue no longer lists it as pending.
    await page.getByRole("link", { name: "Moderation", exact: true }).click();
    await page.getByRole("heading", { name: "Moderation queue" }).waitFor();
    await page.locator("#flags + .empty:not([hidden]), #flags tbody tr").first().waitFor();
    expect(await page.locator(`#flags tr[data-flag-id="${flag.id}"]`).count()).toBe(0);
    await screenshot("moderation");
  });
});
