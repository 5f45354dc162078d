/**
 * The admin UI in a real browser (Debian's Chromium through playwright-core) against the real
 * server: sign-in, outbound webhooks and their delivery log, inbound webhooks, the moderation
 * deep link. One browser for the file, a fresh context (so a fresh sessionStorage) per test.
 */
import { execFile } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createRequire } from "node:module";
import { signWebhookPayload } from "@parley/client";
import { OAuth2Server } from "oauth2-mock-server";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import {
  afterAll,
  afterEach,
  beforeAll,
  beforeEach,
  describe,
  expect,
  it,
  onTestFinished,
} from "vitest";
import { setUserPassword } from "../../src/auth/sign-in-service.js";
import { startDeliveryWork, type BackgroundWork } from "../../src/background-work.js";
import { createTestApp, type TestApp } from "../helpers/build-app.js";
import { SQLITE } from "../helpers/dialects.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";
import { createTestPki } from "../helpers/test-pki.js";
import { CHROMIUM_PATH } from "../helpers/services.js";

const BUILD_SCRIPT = fileURLToPath(new URL("../../scripts/build-admin-ui.mjs", import.meta.url));
const SECRET = "a-receiver-secret-0123456789";
const XSS_NAME = "<img src=x onerror=alert(1)>";
const ADMIN_PASSWORD = "the admin's long password";
/** A password sign-in answers after an argon2id verify: seconds on a busy machine, not one. */
const SIGN_IN_WAIT = { timeout: 20_000 };
/**
 * A screenshot of each page the tests reach is kept here, as a test artifact (test-results/ is
 * git-ignored); PARLEY_UI_SCREENSHOTS names another folder.
 */
const SCREENSHOTS =
  process.env.PARLEY_UI_SCREENSHOTS ??
  fileURLToPath(new URL("../../../../test-results/admin-ui", import.meta.url));
/** axe-core, run inside the page to check accessibility. */
const AXE_SOURCE = fs.readFileSync(
  createRequire(import.meta.url).resolve("axe-core/axe.min.js"),
  "utf8",
);

describe("admin UI in Chromium", { tags: ["chromium"] }, () => {
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
      createTestApp(SQLITE),
      startReceiver(),
      chromium.launch({
        executablePath: CHROMIUM_PATH,
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
    await setUserPassword(t.ctx, "admin", ADMIN_PASSWORD);
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    work = startDeliveryWork(t.ctx, t.app.metrics);
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
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
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

  /** Signs in as the admin with the password, or with `token` pasted. */
  async function signIn(path = "/admin/", token?: string): Promise<void> {
    await page.goto(`${origin}${path}`);
    if (token === undefined) {
      await page.locator("#username").fill("admin");
      await page.locator("#password").fill(ADMIN_PASSWORD);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      return;
    }
    await useToken(token);
  }

  async function useToken(token: string): Promise<void> {
    const details = page.locator("#use-token");
    if ((await details.getAttribute("open")) === null)
      await page.getByText("Use a token instead").click();
    await page.locator("#token").fill(token);
    await page.getByRole("button", { name: "Sign in with the token" }).click();
  }

  async function screenshot(name: string): Promise<void> {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });
  }

  /** Serious and critical axe-core violations on the page as it is now: none may remain. */
  async function accessibilityViolations(): Promise<string[]> {
    if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE_SOURCE);
    const violations = await page.evaluate(async () => {
      const axe = (
        window as unknown as {
          axe: { run(): Promise<{ violations: Violation[]; passes: unknown[] }> };
        }
      ).axe;
      interface Violation {
        id: string;
        impact: string | null;
        help: string;
        nodes: { target: string[] }[];
      }
      const result = await axe.run();
      // An axe that checked nothing would pass anything.
      if (result.passes.length === 0) throw new Error("axe-core checked no rule");
      return result.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        targets: v.nodes.map((n) => n.target.join(" ")),
      }));
    });
    return violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.targets.join(", ")})`);
  }

  /** How far the page scrolls sideways (0 when it fits the viewport). */
  function horizontalOverflow(): Promise<number> {
    return page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
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

    await useToken(`Bearer ${t.admin.token}\n`);
    await page.getByRole("heading", { name: "Outbound webhooks" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/admin/webhooks");
    expect(await page.evaluate(() => sessionStorage.getItem("parley.admin.token"))).toBe(
      t.admin.token,
    );

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.locator("#username").waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);

    // A token the server stops accepting mid-session leads back to sign-in with the reason.
    await page.evaluate(() => sessionStorage.setItem("parley.admin.token", "expired.token.here"));
    await page.goto(`${origin}/admin/inbound`);
    await expect
      .poll(() => page.locator("#sign-in-error").textContent())
      .toContain("no longer accepts your token");
  });

  it("signs in with a password: a session that survives a reload, sends its CSRF header, and ends on sign-out", async () => {
    await page.goto(`${origin}/admin/`);
    await page.locator("#username").fill("admin");
    await page.locator("#password").fill("not the password");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect
      .poll(() => page.locator("#sign-in-error").textContent(), SIGN_IN_WAIT)
      .toContain("wrong");
    // No single sign-on configured: no button for it.
    expect(await page.locator("#sso-link").count()).toBe(0);

    await page.locator("#password").fill(ADMIN_PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("heading", { name: "Outbound webhooks" }).waitFor();
    // The session is an HttpOnly cookie: nothing in storage, nothing a script can read.
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await page.evaluate(() => document.cookie)).toBe("");
    const cookie = (await context.cookies()).find((c) => c.name === "parley_session")!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Lax" });

    // A write goes through with the session (its X-Parley-CSRF header), and after a reload too.
    await page.reload();
    await page.getByRole("heading", { name: "Outbound webhooks" }).waitFor();
    await page.locator("#webhook-name").fill("by session");
    await page.locator("#webhook-url").fill(receiver.url);
    await page.getByRole("button", { name: "Generate" }).click();
    await page.locator("#webhook-event-MESSAGE_CREATED").check();
    await page.getByRole("button", { name: "Create webhook" }).click();
    // Created: its secret is shown once. (Deleted again: the next tests start without webhooks.)
    await page.locator("#webhook-secret-value").waitFor();
    const created = await t.app.inject({
      method: "GET",
      url: "/api/admin/webhooks",
      headers: t.admin.headers,
    });
    for (const webhook of created.json().items as { id: number }[])
      await t.app.inject({
        method: "DELETE",
        url: `/api/admin/webhooks/${webhook.id}`,
        headers: t.admin.headers,
      });

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.locator("#username").waitFor();
    const after = await t.app.inject({
      method: "GET",
      url: "/api/me",
      headers: { cookie: `parley_session=${cookie.value}` },
    });
    expect(after.statusCode).toBe(401);
  });

  it("offers single sign-on when configured, and the provider's redirect back opens the admin UI", async () => {
    const provider = new OAuth2Server();
    await provider.issuer.keys.generate("RS256");
    await provider.start(0, "127.0.0.1");
    onTestFinished(() => provider.stop());
    provider.issuer.url = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
    provider.service.on("beforeTokenSigning", (token: { payload: Record<string, unknown> }) => {
      token.payload.sub = "sso-admin";
    });
    const sso = await createTestApp(SQLITE, {
      oidcIssuer: provider.issuer.url,
      oidcClientId: "parley-admin-ui",
      oidcClientSecret: "a client secret",
      oidcName: "Acme",
    });
    onTestFinished(() => sso.close());
    // Sign-up is off: the provider's account signs in as the admin it is linked to.
    const link = await sso.app.inject({
      method: "POST",
      url: `/api/admin/users/${sso.admin.id}/identities`,
      headers: sso.admin.headers,
      payload: { subject: "sso-admin" },
    });
    expect(link.statusCode).toBe(201);
    const ssoOrigin = await sso.app.listen({ port: 0, host: "127.0.0.1" });

    await page.goto(`${ssoOrigin}/admin/`);
    const button = page.getByRole("link", { name: "Sign in with Acme" });
    await button.waitFor();
    await button.click();
    await page.getByRole("heading", { name: "Outbound webhooks" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/admin/webhooks");
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });

  it("refuses a user who is not an admin, and ends that session", async () => {
    const user = await t.user();
    await setUserPassword(t.ctx, user.username, "a user's long password");
    await page.goto(`${origin}/admin/`);
    await page.locator("#username").fill(user.username);
    await page.locator("#password").fill("a user's long password");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect
      .poll(() => page.locator("#sign-in-error").textContent(), SIGN_IN_WAIT)
      .toContain("not an admin");
    const cookie = (await context.cookies()).find((c) => c.name === "parley_session");
    if (cookie) {
      const me = await t.app.inject({
        method: "GET",
        url: "/api/me",
        headers: { cookie: `parley_session=${cookie.value}` },
      });
      expect(me.statusCode).toBe(401);
    }
  });

  it("creates a webhook through the form, shows API validation errors, renders names as text", async () => {
    await signIn();
    await page.getByRole("heading", { name: "Outbound webhooks" }).waitFor();
    await page.locator("#webhook-name").fill(XSS_NAME);
    await page.locator("#webhook-url").fill(receiver.url);
    await page.locator("#webhook-secret").fill("too-short");
    await page.locator("#webhook-event-MESSAGE_CREATED").check();
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

    // The secret is shown once, with a copy button that really copies it.
    expect(await page.locator("#webhook-secret-value").inputValue()).toBe(SECRET);
    expect(await page.locator("#secret-reveal").textContent()).toContain("only time");
    await screenshot("webhooks");
    await page.getByRole("button", { name: "Copy Secret" }).click();
    await expect
      .poll(() => page.locator("#webhook-secret-value-copied").textContent())
      .toBe("Copied.");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(SECRET);
    await page.reload();
    await created.first().waitFor();
    expect(await page.locator("#secret-reveal").count()).toBe(0);
    expect(await page.content()).not.toContain(SECRET);

    // Generate makes a whsec_ secret, shown once after Create. With an endpoint listed, the form
    // opens from "Add endpoint".
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await page.locator("#webhook-name").fill("generated");
    await page.locator("#webhook-url").fill(receiver.url);
    await page.getByRole("button", { name: "Generate" }).click();
    const generated = await page.locator("#webhook-secret").inputValue();
    expect(generated).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await page.locator("#webhook-event-ROOM_CREATED").check();
    await page.getByRole("button", { name: "Create webhook" }).click();
    await page.locator("#secret-reveal").waitFor();
    expect(await page.locator("#webhook-secret-value").inputValue()).toBe(generated);
    expect(await accessibilityViolations()).toEqual([]);
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
    // The log updates by itself: no reload, no Refresh.
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 1));
    await expect
      .poll(() => rows.first().getAttribute("data-status"), { timeout: 5_000 })
      .toBe("SUCCESS");

    // Filters live in the page address, so a filtered log can be linked and reloaded.
    await page.locator("#delivery-status").selectOption("FAILED");
    await page.locator("#deliveries + .empty:not([hidden])").waitFor();
    expect(new URL(page.url()).search).toBe("?status=FAILED");
    await page.locator("#delivery-event").selectOption("WEBHOOK_TEST");
    expect(new URL(page.url()).search).toBe("?status=FAILED&event=WEBHOOK_TEST");
    await page.goto(`${origin}/admin/webhooks/${webhook.id}?status=SUCCESS&event=WEBHOOK_TEST`);
    await rows.first().waitFor();
    expect(await page.locator("#delivery-status").inputValue()).toBe("SUCCESS");
    expect(await page.locator("#delivery-event").inputValue()).toBe("WEBHOOK_TEST");
    expect(await rows.count()).toBe(1);
    await page.goto(`${origin}/admin/webhooks/${webhook.id}?event=ROOM_CREATED`);
    await page.locator("#deliveries + .empty:not([hidden])").waitFor();
    expect(await page.locator("#delivery-event").inputValue()).toBe("ROOM_CREATED");
    await screenshot("endpoint-detail");
    await page.goto(`${origin}/admin/webhooks/${webhook.id}?status=SUCCESS`);

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

    expect(await accessibilityViolations()).toEqual([]);

    // Redeliver opens the new delivery, PENDING while the receiver holds its answer; once it
    // answers, the page shows SUCCESS within 2 s by itself.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    receiver.respondWith(async () => {
      await held;
      return { status: 204 };
    });
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 2));
    const shownBefore = new URL(page.url()).pathname;
    await page.getByRole("button", { name: "Redeliver" }).click();
    // The new delivery's page, not the one still shown while the redelivery is being queued.
    await page.waitForURL(
      (url) => url.pathname !== shownBefore && /\/deliveries\/\d+$/.test(url.pathname),
    );
    await page.getByRole("heading", { name: /^Delivery \d+$/ }).waitFor();
    expect(await page.locator("#delivery-status-badge").textContent()).toBe("PENDING");
    await receiver.waitForRequests(before + 2);
    const answered = Date.now();
    release();
    await page.locator("#delivery-status-badge .badge-success").waitFor({ timeout: 2_000 });
    expect(Date.now() - answered).toBeLessThan(2_000);
    expect(await page.locator("#attempts tbody tr").first().textContent()).toContain("204");
    expect(await page.evaluate(() => (window as unknown as { marker: number }).marker)).toBe(2);
    receiver.respondWith(() => ({ status: 204 }));
  });

  it("edits every field of an endpoint, and the new secret signs its deliveries", async () => {
    const webhook = await api<{ id: number }>("POST", "/api/admin/webhooks", {
      name: "To edit",
      url: receiver.url,
      secret: SECRET,
      events: ["ROOM_CREATED"],
    });
    await signIn(`/admin/webhooks/${webhook.id}`);
    await page.getByRole("heading", { name: "To edit" }).waitFor();
    // Keyboard only: open the form, change the fields, submit with Enter.
    await page.locator("#edit-endpoint > summary").focus();
    await page.keyboard.press("Enter");
    await page.locator("#edit-name").waitFor({ state: "visible" });
    expect(await page.locator("#edit-name").inputValue()).toBe("To edit");
    expect(await page.locator("#edit-event-ROOM_CREATED").isChecked()).toBe(true);
    await page.locator("#edit-name").fill("Edited");
    await page.locator("#edit-url").fill(`${receiver.origin}/edited`);
    await page.locator("#edit-event-ROOM_CREATED").uncheck();
    await page.locator("#edit-event-MESSAGE_CREATED").focus();
    await page.keyboard.press("Space");
    await page.locator("#edit-event-ROOM_DELETED").check();
    await page.locator("#edit-enabled").uncheck();
    await page.locator("#edit-secret").fill("a-brand-new-secret-9876543210");
    await screenshot("endpoint-edit");
    expect(await accessibilityViolations()).toEqual([]);
    await page.locator("#edit-url").press("Enter");

    await page.getByRole("heading", { name: "Edited", exact: true }).waitFor();
    expect(await page.locator("#webhook-secret-value").inputValue()).toBe(
      "a-brand-new-secret-9876543210",
    );
    expect(await api("GET", `/api/admin/webhooks/${webhook.id}`)).toMatchObject({
      name: "Edited",
      url: `${receiver.origin}/edited`,
      events: ["MESSAGE_CREATED", "ROOM_DELETED"],
      enabled: false,
    });
    await expect
      .poll(() => page.locator("main").textContent())
      .toContain(`${receiver.origin}/edited`);

    // Saving with nothing changed says so.
    await page.locator("#edit-endpoint > summary").click();
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect
      .poll(() => page.locator("#edit-form-error").textContent())
      .toContain("Nothing to save");

    const before = receiver.requests.length;
    await page.getByRole("button", { name: "Send test event" }).click();
    const [sent] = (await receiver.waitForRequests(before + 1)).slice(before);
    expect(sent!.path).toBe("/edited");
    expect(sent!.headers["x-webhook-signature-256"]).toBe(
      signWebhookPayload("a-brand-new-secret-9876543210", sent!.body),
    );
  });

  it("sets OAuth 2.0 and a client certificate in the edit form, shows them masked, and keeps a secret left empty", async () => {
    const pki = createTestPki();
    const client = pki.client("admin-ui-client");
    const webhook = await api<{ id: number }>("POST", "/api/admin/webhooks", {
      name: "Enterprise",
      url: receiver.url,
      secret: SECRET,
      events: ["ROOM_CREATED"],
    });
    await signIn(`/admin/webhooks/${webhook.id}`);
    await page.getByRole("heading", { name: "Enterprise" }).waitFor();
    await page.locator("#edit-endpoint > summary").click();
    await page.locator("#edit-auth-type").selectOption("oauth2");
    await page.locator("#edit-auth-token-url").fill("https://idp.example.com/oauth2/token");
    await page.locator("#edit-auth-client-id").fill("parley-ui");
    await page.locator("#edit-auth-client-secret").fill("ui-client-secret-abcd");
    await page.locator("#edit-auth-scope").fill("hooks.write");
    await page.locator("#edit-tls-certificate").fill(client.cert);
    await page.locator("#edit-tls-key").fill(client.key);
    expect(await accessibilityViolations()).toEqual([]);
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect
      .poll(() => page.locator("main").textContent())
      .toContain(
        "OAuth 2.0 client parley-ui at https://idp.example.com/oauth2/token (secret ****abcd, scope hooks.write)",
      );
    expect(await page.locator("main").textContent()).toContain("O=Parley Test, CN=admin-ui-client");
    expect(await api("GET", `/api/admin/webhooks/${webhook.id}`)).toMatchObject({
      auth: { type: "oauth2", clientId: "parley-ui", clientSecret: "****abcd" },
      tls: { subject: "O=Parley Test, CN=admin-ui-client" },
    });
    expect(await page.content()).not.toContain("ui-client-secret");
    expect(await page.content()).not.toContain("PRIVATE KEY-----\nM");

    // The secret is write-only: the form shows it masked, and saving without it keeps it.
    await page.locator("#edit-endpoint > summary").click();
    const secretField = page.locator("#edit-auth-client-secret");
    expect(await secretField.inputValue()).toBe("");
    expect(await secretField.getAttribute("placeholder")).toBe("unchanged (****abcd)");
    await page.locator("#edit-auth-scope").fill("hooks.read");
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect
      .poll(
        async () =>
          (await api<{ auth: { scope: string } }>("GET", `/api/admin/webhooks/${webhook.id}`)).auth
            .scope,
      )
      .toBe("hooks.read");
    expect(await api("GET", `/api/admin/webhooks/${webhook.id}`)).toMatchObject({
      auth: { clientSecret: "****abcd" },
    });
  });

  it("asks before deleting in a row of its own, the table keeping its columns", async () => {
    const long = `${receiver.url}/a/rather/long/path/that/must/not/wrap/one/character/per/line`;
    const webhook = await api<{ id: number }>("POST", "/api/admin/webhooks", {
      name: "Doomed",
      url: long,
      secret: SECRET,
      events: ["ROOM_CREATED"],
    });
    await signIn();
    const tr = page.locator(`#webhooks tr[data-webhook-id="${webhook.id}"]`);
    await tr.waitFor();
    const url = tr.locator(".url");
    const widthBefore = (await url.boundingBox())!.width;
    await tr.getByRole("button", { name: "Delete" }).focus();
    await page.keyboard.press("Enter");
    const confirmRow = page.locator("#webhooks tr.confirm-row");
    await confirmRow.waitFor();
    // Focus moved to Confirm; the URL column did not collapse.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Confirm: delete");
    expect((await url.boundingBox())!.width).toBeGreaterThan(widthBefore * 0.8);
    await screenshot("delete-confirm");
    await page.keyboard.press("Escape");
    expect(await confirmRow.count()).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Delete");

    await tr.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("button", { name: "Confirm: delete" }).click();
    await expect.poll(() => tr.count()).toBe(0);
    const { items } = await api<{ items: { id: number }[] }>("GET", "/api/admin/webhooks");
    expect(items.map((w) => w.id)).not.toContain(webhook.id);
  });

  it("fits 360, 420 and 1920 px wide screens without scrolling sideways", async () => {
    const room = await api<{ id: number }>("POST", "/api/rooms", { name: "narrow" });
    await api("POST", `/api/rooms/${room.id}/messages`, {
      content: "you are a worthless idiot, said the long message that keeps going on and on",
    });
    const webhook = await api<{ id: number }>("POST", "/api/admin/webhooks", {
      name: "A webhook with a long name to see how it wraps",
      url: `${receiver.url}/with/a/long/path/that/has/to/wrap/somewhere/on/a/phone`,
      secret: SECRET,
      events: ["MESSAGE_CREATED", "ROOM_CREATED", "ROOM_DELETED", "USER_JOINED_ROOM"],
    });
    receiver.respondWith(() => ({ status: 500, body: `{"error":"${"x".repeat(300)}"}` }));
    const { deliveryId } = await api<{ deliveryId: number }>(
      "POST",
      `/api/admin/webhooks/${webhook.id}/test`,
    );
    await expect
      .poll(async () => {
        const d = await api<{ attempts: number }>(
          "GET",
          `/api/admin/webhooks/${webhook.id}/deliveries/${deliveryId}`,
        );
        return d.attempts;
      })
      .toBeGreaterThan(0);
    receiver.respondWith(() => ({ status: 204 }));

    await signIn();
    await page.locator("#webhooks").waitFor();
    const pages: [string, string][] = [
      ["/admin/webhooks", "#webhooks"],
      [`/admin/webhooks/${webhook.id}`, "#deliveries tbody tr"],
      [`/admin/webhooks/${webhook.id}/deliveries/${deliveryId}`, "#attempts"],
      ["/admin/deliveries", "#search-results tbody tr"],
      ["/admin/inbound", "#inbound-form"],
      ["/admin/moderation", "#flags tbody tr"],
    ];
    for (const width of [360, 420, 1920]) {
      await page.setViewportSize({ width, height: 800 });
      for (const [path, ready] of pages) {
        await page.goto(`${origin}${path}`);
        await page.locator(ready).first().waitFor();
        // Every folded panel open too: the edit form, rotate, recover, the catalogue's samples.
        if ((await page.locator("#edit-form, #webhook-form").count()) > 0)
          await page
            .locator("[id$='-event-MESSAGE_CREATED-description']")
            .waitFor({ state: "attached" });
        await page.evaluate(() => {
          for (const details of document.querySelectorAll("details")) details.open = true;
        });
        const wide = await page.evaluate(
          (w) =>
            Array.from(document.querySelectorAll("body *"))
              .filter((e) => e.getBoundingClientRect().right > w + 0.5)
              .slice(0, 5)
              .map((e) => `${e.tagName}.${e.className}#${e.id}`),
          width,
        );
        expect(await horizontalOverflow(), `${path} at ${width} px: ${wide.join(" ")}`).toBe(0);
        const signOut = await page.getByRole("button", { name: "Sign out" }).boundingBox();
        expect(signOut!.x + signOut!.width, `Sign out at ${width} px`).toBeLessThanOrEqual(width);
        if (width !== 1920) {
          const name = path.split("/").slice(2).join("-").replace(/\d+/g, "n") || "webhooks";
          await screenshot(`${width}px-${name}`);
        }
      }
    }
    expect(await accessibilityViolations()).toEqual([]);
  });

  it("shows the Enterprise notice on a community-edition server", async () => {
    const community = await createTestApp(SQLITE, { edition: "community" });
    onTestFinished(() => community.close());
    await community.app.listen({ port: 0, host: "127.0.0.1" });
    const communityOrigin = `http://127.0.0.1:${(community.app.server.address() as AddressInfo).port}`;
    await page.goto(`${communityOrigin}/admin/`);
    await useToken(community.admin.token);
    await page.locator("#enterprise-required").waitFor();
    expect(await page.locator("#enterprise-required").textContent()).toContain(
      "Enterprise edition",
    );
    expect(await page.locator("#webhook-form").count()).toBe(0);
  });

  it("shows an inbound webhook's URLs once, one per sender, then only the token's last 8 characters", async () => {
    await api("POST", "/api/rooms", { name: "deploys" });
    await signIn("/admin/inbound");
    await page.getByRole("heading", { name: "Inbound webhooks" }).waitFor();
    await page.locator("#inbound-room").selectOption({ label: "deploys" });
    await page.locator("#inbound-name").fill("CI <script>alert(2)</script>");
    await page.getByRole("button", { name: "Create inbound webhook" }).click();

    const url = await page.locator("#ingest-url").inputValue();
    expect(url).toMatch(/\/api\/public\/webhooks\/ingest\/[A-Za-z0-9_-]{43}$/);
    expect(await page.locator("#token-reveal").textContent()).toContain("only time");
    // Beside it, the Slack-compatible URL, which takes Slack's {"text": ...}.
    const slackUrl = await page.locator("#slack-url").inputValue();
    expect(slackUrl).toBe(`${url}/slack`);
    const slack = await t.app.inject({
      method: "POST",
      url: new URL(slackUrl).pathname,
      payload: { text: "deployed from a Slack tool" },
    });
    expect(slack.statusCode, slack.body).toBe(200);
    const plainWithSlackBody = await t.app.inject({
      method: "POST",
      url: new URL(url).pathname,
      payload: { text: "x" },
    });
    expect(plainWithSlackBody.statusCode).toBe(400);
    await page.getByRole("button", { name: "Copy Slack-compatible URL" }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(slackUrl);
    // The Discord, GitHub and Stripe addresses, each copyable; the Discord one posts as Discord's.
    const token = url.slice(-43);
    const listed = page.locator("#inbound-webhooks tbody tr");
    await listed.first().waitFor();
    const webhookId = Number(await listed.first().getAttribute("data-inbound-id"));
    const discordUrl = await page.locator("#discord-url").inputValue();
    expect(discordUrl).toBe(
      `${new URL(url).origin}/api/public/discord/v10/webhooks/${webhookId}/${token}`,
    );
    expect(await page.locator("#github-url").inputValue()).toBe(`${url}/github`);
    expect(await page.locator("#stripe-url").inputValue()).toBe(`${url}/stripe`);
    const discord = await t.app.inject({
      method: "POST",
      url: `${new URL(discordUrl).pathname}?wait=true`,
      payload: { content: "deployed from a Discord tool" },
    });
    expect(discord.statusCode, discord.body).toBe(200);
    expect(discord.json()).toMatchObject({ content: "deployed from a Discord tool" });
    await page.getByRole("button", { name: "Copy Discord-compatible URL" }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(discordUrl);
    expect(await accessibilityViolations()).toEqual([]);
    await screenshot("inbound");
    expect(await listed.first().locator(".token-hint").textContent()).toBe(`…${token.slice(-8)}`);
    expect(await listed.first().textContent()).toContain("CI <script>alert(2)</script>");
    expect(await listed.first().textContent()).not.toContain(token);

    // The list shows each address with a placeholder for the token, and whether a signing secret is set.
    expect(await listed.first().locator(".signing-secret").textContent()).toBe("not set");
    await page.locator(`#inbound-${webhookId}-setup > summary`).click();
    expect(await page.locator(`#inbound-${webhookId}-discord-url`).inputValue()).toBe(
      `${origin}/api/public/discord/v10/webhooks/${webhookId}/<token>`,
    );
    expect(await page.locator(`#inbound-${webhookId}-github-url`).inputValue()).toBe(
      `${origin}/api/public/webhooks/ingest/<token>/github`,
    );
    expect(await page.locator("#sender-setup").textContent()).toMatch(
      /Setting up GitHub.*Payload URL.*Secret.*Setting up Stripe.*Endpoint URL.*whsec_/s,
    );
    expect(await accessibilityViolations()).toEqual([]);
    await screenshot("inbound-addresses");

    // A signing secret set from the page: the API keeps it write-only and the list says "set".
    await page.locator(`#inbound-${webhookId}-secret`).fill("a-signing-secret-of-some-length");
    await page
      .locator(`#inbound-${webhookId}-setup`)
      .getByRole("button", { name: "Save secret" })
      .click();
    await expect.poll(() => listed.first().locator(".signing-secret").textContent()).toBe("set");
    const shown = await api<{ signingSecretSet: boolean }>(
      "GET",
      `/api/admin/inbound-webhooks/${webhookId}`,
    );
    expect(shown).toMatchObject({ signingSecretSet: true });
    expect(JSON.stringify(shown)).not.toContain("a-signing-secret-of-some-length");
    expect(await page.content()).not.toContain("a-signing-secret-of-some-length");

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
    await api("POST", `/api/rooms/${room.id}/messages`, { content: "another worthless idiot" });
    await page.getByRole("link", { name: "Moderation", exact: true }).click();
    await page.getByRole("heading", { name: "Moderation queue" }).waitFor();
    await page.locator("#flags + .empty:not([hidden]), #flags tbody tr").first().waitFor();
    expect(await page.locator(`#flags tr[data-flag-id="${flag.id}"]`).count()).toBe(0);
    // Each row shows the message text being judged.
    await expect
      .poll(() => page.locator("#flags tbody tr q.excerpt").allTextContents())
      .toContain("another worthless idiot");
    expect(await accessibilityViolations()).toEqual([]);
    await screenshot("moderation");
  });

  it("shows a flagged message's edits on its flag page, oldest first", async () => {
    const room = await api<{ id: number }>("POST", "/api/rooms", { name: "edited" });
    const message = await api<{ id: number }>("POST", `/api/rooms/${room.id}/messages`, {
      content: "you are an idiot <b>really</b>",
    });
    await api("PATCH", `/api/rooms/${room.id}/messages/${message.id}`, {
      content: "you are right",
    });
    const { items } = await api<{ items: { id: number; messageId: number }[] }>(
      "GET",
      "/api/admin/moderation/flags?status=pending&limit=200",
    );
    const flag = items.find((item) => item.messageId === message.id)!;
    expect(flag).toBeDefined();

    await signIn(`/admin/moderation/${flag.id}`);
    await page.getByRole("heading", { name: "Edits (1)" }).waitFor();
    const revisions = page.locator("#message-edits ol.revisions > li");
    expect(await revisions.locator(".meta").allTextContents()).toEqual([
      expect.stringMatching(/^Posted · /),
      expect.stringMatching(/^Edit 1 \(current\) · /),
    ]);
    // Each version as written, as text.
    expect(await revisions.locator("pre").allTextContents()).toEqual([
      "you are an idiot <b>really</b>",
      "you are right",
    ]);
    await expect.poll(() => page.locator("#message-content").textContent()).toBe("you are right");
    expect(await accessibilityViolations()).toEqual([]);
    await screenshot("flag-edits");

    // A message never edited says so.
    const plain = await api<{ id: number }>("POST", `/api/rooms/${room.id}/messages`, {
      content: "a worthless idiot, unedited",
    });
    const after = await api<{ items: { id: number; messageId: number }[] }>(
      "GET",
      "/api/admin/moderation/flags?status=pending&limit=200",
    );
    const plainFlag = after.items.find((item) => item.messageId === plain.id)!;
    await page.goto(`${origin}/admin/moderation/${plainFlag.id}`);
    await page.locator("#message-edits", { hasText: "Not edited since it was posted." }).waitFor();
  });

  interface Delivery {
    id: number;
    status: string;
    attempts: number;
    eventId: string;
  }

  /** Waits until the API shows the delivery settled as `status`. */
  async function deliveryReaches(webhookId: number, deliveryId: number, status: string) {
    await expect
      .poll(async () => {
        const d = await api<Delivery>(
          "GET",
          `/api/admin/webhooks/${webhookId}/deliveries/${deliveryId}`,
        );
        return d.status;
      })
      .toBe(status);
    return api<Delivery>("GET", `/api/admin/webhooks/${webhookId}/deliveries/${deliveryId}`);
  }

  it("shows each endpoint's health and a banner linking to one Parley disabled (410 Gone)", async () => {
    receiver.respondWith((req) => (req.path === "/gone" ? { status: 410 } : { status: 204 }));
    onTestFinished(() => receiver.respondWith(() => ({ status: 204 })));
    const healthy = await api<{ id: number }>("POST", "/api/admin/webhooks", {
      name: "Healthy sink",
      url: receiver.url,
      secret: SECRET,
      events: ["ROOM_CREATED"],
    });
    const gone = await api<{ id: number }>("POST", "/api/admin/webhooks", {
      name: "Moved away",
      url: `${receiver.origin}/gone`,
      secret: SECRET,
      events: ["ROOM_CREATED"],
    });
    const ok = await api<{ deliveryId: number }>("POST", `/api/admin/webhooks/${healthy.id}/test`);
    await deliveryReaches(healthy.id, ok.deliveryId, "SUCCESS");
    await api("POST", `/api/admin/webhooks/${gone.id}/test`);
    await expect
      .poll(
        async () =>
          (await api<{ disabledReason: string | null }>("GET", `/api/admin/webhooks/${gone.id}`))
            .disabledReason,
      )
      .toBe("gone");

    await signIn();
    const banner = page.locator("#auto-disabled");
    await banner.waitFor();
    expect(await banner.textContent()).toContain("Moved away: the receiver answered 410 Gone");
    const goneRow = page.locator(`#webhooks tr[data-webhook-id="${gone.id}"]`);
    expect(await goneRow.locator(".badge-gone").textContent()).toBe("auto-disabled: 410 Gone");
    expect(await goneRow.locator(".health").textContent()).toMatch(/0\.0% ok of \d+ in 24 h/);
    expect(await goneRow.locator(".last-error").textContent()).toContain("410");
    const healthyRow = page.locator(`#webhooks tr[data-webhook-id="${healthy.id}"]`);
    expect(await healthyRow.locator(".badge-enabled").textContent()).toBe("enabled");
    expect(await healthyRow.locator(".health").textContent()).toContain("100.0% ok of 1 in 24 h");
    expect(await accessibilityViolations()).toEqual([]);
    await screenshot("webhooks-health");

    await banner.getByRole("link", { name: "Moved away" }).click();
    await page.getByRole("heading", { name: "Moved away", exact: true }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/admin/webhooks/${gone.id}`);
    expect(await page.locator("#disabled-reason").textContent()).toContain("410 Gone");
    expect(await page.locator("dl.details").first().textContent()).toContain(
      "auto-disabled: 410 Gone since",
    );
    expect(await page.locator("main").textContent()).toContain("Failures in a row");
    expect(await accessibilityViolations()).toEqual([]);
    await screenshot("endpoint-health");
  });

  it("rotates the secret, shows it once with copy and its overlap, and the next delivery verifies with it", async () => {
    const webhook = await api<{ id: number }>("POST", "/api/admin/webhooks", {
      name: "Rotating",
      url: receiver.url,
      secret: SECRET,
      events: ["ROOM_CREATED"],
    });
    await signIn(`/admin/webhooks/${webhook.id}`);
    await page.getByRole("heading", { name: "Rotating" }).waitFor();
    await page.locator("#rotate-secret > summary").focus();
    await page.keyboard.press("Enter");
    await page.locator("#rotate-overlap").selectOption({ label: "1 hour" });
    expect(await accessibilityViolations()).toEqual([]);
    const asked = Date.now();
    await page.getByRole("button", { name: "Rotate secret" }).click();
    const value = page.locator("#webhook-secret-value");
    await value.waitFor();
    const secret = await value.inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const expiry = page.locator("#previous-secret-expiry");
    expect(await expiry.textContent()).toContain(
      "The previous secret also signs every delivery until",
    );
    const until = Date.parse((await expiry.locator("time").getAttribute("datetime"))!);
    expect(until).toBeGreaterThanOrEqual(asked + 3_600_000 - 5_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 3_600_000 + 5_000);
    await page.getByRole("button", { name: "Copy Secret" }).click();
    await expect
      .poll(() => page.locator("#webhook-secret-value-copied").textContent())
      .toBe("Copied.");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    expect(await accessibilityViolations()).toEqual([]);
    await screenshot("rotate-secret");

    const before = receiver.requests.length;
    await page.getByRole("button", { name: "Send test event" }).click();
    const [sent] = (await receiver.waitForRequests(before + 1)).slice(before);
    expect(sent!.headers["x-webhook-signature-256"]).toBe(signWebhookPayload(secret, sent!.body));

    // Shown once: a reload forgets it.
    await page.reload();
    await page.getByRole("heading", { name: "Rotating" }).waitFor();
    expect(await page.locator("#secret-reveal").count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
  });

  it("creates an ed25519 endpoint without a secret, shows its public key to copy, and verifies ownership on request", async () => {
    const echo = await startReceiver();
    onTestFinished(() => echo.close());
    echo.respondWith((request) => {
      const envelope = JSON.parse(request.body.toString()) as {
        event: string;
        data: { challenge?: string };
      };
      return envelope.event === "WEBHOOK_VERIFICATION"
        ? { status: 200, body: envelope.data.challenge! }
        : { status: 204 };
    });
    await signIn();
    await page.getByRole("heading", { name: "Outbound webhooks" }).waitFor();
    // The form opens at once only on an empty list.
    if (await page.locator("#add-endpoint").isVisible())
      await page.locator("#add-endpoint").click();
    await page.locator("#webhook-name").fill("Signed with ed25519");
    await page.locator("#webhook-url").fill(echo.url);
    await page.locator("#webhook-signature-scheme").selectOption("standard-webhooks-ed25519");
    await page.locator("#webhook-event-ROOM_CREATED").check();
    await page.getByRole("button", { name: "Create webhook" }).click();
    await page.getByRole("link", { name: "Signed with ed25519" }).waitFor();
    // No secret was given, so none is revealed.
    expect(await page.locator("#secret-reveal").count()).toBe(0);
    const { items } = await api<{
      items: Array<{ id: number; name: string; publicKey: string | null; verification: string }>;
    }>("GET", "/api/admin/webhooks?limit=200");
    const created = items.find((item) => item.name === "Signed with ed25519")!;
    expect(created.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(created.verification).toBe("not_required");

    await page.getByRole("link", { name: "Signed with ed25519" }).click();
    await page.getByRole("heading", { name: "Signed with ed25519" }).waitFor();
    expect(await page.locator("#public-key").inputValue()).toBe(created.publicKey);
    await page.getByRole("button", { name: /^Copy Public key/ }).click();
    await expect.poll(() => page.locator("#public-key-copied").textContent()).toBe("Copied.");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(created.publicKey);
    expect(await page.locator("#verification").textContent()).toBe("not checked");
    expect(await accessibilityViolations()).toEqual([]);

    await page.getByRole("button", { name: "Verify ownership" }).click();
    await expect
      .poll(() => page.locator("#flash").textContent())
      .toContain("Ownership challenge sent");
    const [challenge] = await echo.waitForRequests(1);
    // Signed v1a with the key shown: node:crypto verifies it with the public key alone.
    const key = crypto.createPublicKey({
      key: {
        kty: "OKP",
        crv: "Ed25519",
        x: Buffer.from(created.publicKey!.slice(5), "base64").toString("base64url"),
      },
      format: "jwk",
    });
    const signed = Buffer.concat([
      Buffer.from(
        `${challenge!.headers["webhook-id"]}.${challenge!.headers["webhook-timestamp"]}.`,
      ),
      challenge!.body,
    ]);
    const signature = challenge!.headers["webhook-signature"]!;
    expect(signature).toMatch(/^v1a,/);
    expect(crypto.verify(null, signed, key, Buffer.from(signature.slice(4), "base64"))).toBe(true);
    await expect
      .poll(
        async () => {
          await page.reload();
          await page.getByRole("heading", { name: "Signed with ed25519" }).waitFor();
          return page.locator("#verification").textContent();
        },
        { interval: 300, timeout: 15_000 },
      )
      .toBe("verified");
    await screenshot("ed25519-endpoint");
  });

  it("recovers failed deliveries after saying how many will be queued", async () => {
    receiver.respondWith((req) => (req.path === "/down" ? { status: 500 } : { status: 204 }));
    onTestFinished(() => receiver.respondWith(() => ({ status: 204 })));
    const webhook = await api<{ id: number }>("POST", "/api/admin/webhooks", {
      name: "Outage",
      url: `${receiver.origin}/down`,
      secret: SECRET,
      events: ["ROOM_CREATED"],
    });
    const queued: number[] = [];
    for (let i = 0; i < 3; i++) {
      const { deliveryId } = await api<{ deliveryId: number }>(
        "POST",
        `/api/admin/webhooks/${webhook.id}/test`,
      );
      queued.push(deliveryId);
    }
    const originals: Delivery[] = [];
    for (const id of queued) originals.push(await deliveryReaches(webhook.id, id, "FAILED"));
    // Disabled, the endpoint holds its deliveries: they stay FAILED while the test counts.
    await api("PATCH", `/api/admin/webhooks/${webhook.id}`, { enabled: false });

    await signIn(`/admin/webhooks/${webhook.id}`);
    await page.getByRole("heading", { name: "Outage" }).waitFor();
    await page.locator("#recover > summary").click();
    expect(await page.locator("#recover-since").inputValue()).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d$/,
    );
    // Nothing failed in the future.
    await page.locator("#recover-since").fill("2099-01-01T00:00");
    await page.getByRole("button", { name: "Count deliveries to recover" }).click();
    await expect
      .poll(() => page.locator("#recover-result").textContent())
      .toContain("nothing to recover");

    await page.locator("#recover-since").fill(
      await page.evaluate(() => {
        const at = new Date(Date.now() - 3_600_000);
        const pad = (n: number) => String(n).padStart(2, "0");
        return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
      }),
    );
    await page.locator("#recover-failed").check();
    await page.getByRole("button", { name: "Count deliveries to recover" }).click();
    const confirm = page.getByRole("button", { name: "Confirm: queue 3 deliveries" });
    await confirm.waitFor();
    expect(await page.locator("#recover-question").textContent()).toMatch(
      /^3 EXHAUSTED or FAILED deliveries since .+ will be queued again \(held while the endpoint is disabled\)\.$/,
    );
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe(
      "Confirm: queue 3 deliveries",
    );
    expect(await accessibilityViolations()).toEqual([]);
    await screenshot("recover-confirm");
    // Escape cancels; asking again shows the same count.
    await page.keyboard.press("Escape");
    expect(await confirm.count()).toBe(0);
    await page.getByRole("button", { name: "Count deliveries to recover" }).click();
    await confirm.click();
    await expect
      .poll(() => page.locator("#recover-result").textContent())
      .toBe("Queued 3 deliveries again.");
    const { items } = await api<{ items: Delivery[] }>(
      "GET",
      `/api/admin/deliveries?webhookId=${webhook.id}`,
    );
    expect(items).toHaveLength(6);
    // Three new deliveries, each carrying the event ID of one it recovers.
    const copies = items.filter((d) => !originals.some((o) => o.id === d.id));
    expect(copies.map((d) => d.eventId).sort()).toEqual(originals.map((o) => o.eventId).sort());
  });

  it("searches deliveries across endpoints, the filters in the page address", async () => {
    const first = await api<{ id: number }>("POST", "/api/admin/webhooks", {
      name: "Search one",
      url: receiver.url,
      secret: SECRET,
      events: ["ROOM_CREATED"],
    });
    const second = await api<{ id: number }>("POST", "/api/admin/webhooks", {
      name: "Search two",
      url: receiver.url,
      secret: SECRET,
      events: ["ROOM_CREATED"],
    });
    const sent: Delivery[] = [];
    for (const id of [first.id, first.id, second.id]) {
      const { deliveryId } = await api<{ deliveryId: number }>(
        "POST",
        `/api/admin/webhooks/${id}/test`,
      );
      sent.push(await deliveryReaches(id, deliveryId, "SUCCESS"));
    }

    await signIn(`/admin/deliveries?webhookId=${first.id}&status=SUCCESS`);
    const rows = page.locator("#search-results tbody tr");
    await rows.first().waitFor();
    expect(await page.locator("#search-webhookId").inputValue()).toBe(String(first.id));
    expect(await page.locator("#search-status").inputValue()).toBe("SUCCESS");
    expect(await rows.count()).toBe(2);
    for (const text of await rows.allTextContents()) expect(text).toContain("Search one");
    expect(await accessibilityViolations()).toEqual([]);
    await screenshot("delivery-search");

    // The form writes its filters to the address; a reload shows the same search.
    await page.locator("#search-webhookId").selectOption("");
    await page.locator("#search-eventId").fill(sent[2]!.eventId);
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get("eventId")).toBe(sent[2]!.eventId);
    expect(new URL(page.url()).searchParams.get("webhookId")).toBeNull();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().getAttribute("data-delivery-id")).toBe(String(sent[2]!.id));
    await page.reload();
    await page.locator(`#search-results tr[data-delivery-id="${sent[2]!.id}"]`).waitFor();
    expect(await rows.count()).toBe(1);
    expect(await page.locator("#search-eventId").inputValue()).toBe(sent[2]!.eventId);

    await rows
      .first()
      .getByRole("link", { name: `#${sent[2]!.id}` })
      .click();
    await page.getByRole("heading", { name: `Delivery ${sent[2]!.id}` }).waitFor();
    expect(new URL(page.url()).pathname).toBe(
      `/admin/webhooks/${second.id}/deliveries/${sent[2]!.id}`,
    );

    // A time range: nothing was queued in 2099.
    await page.goto(`${origin}/admin/deliveries?since=2099-01-01T00:00:00.000Z`);
    await page.locator("#search-results + .empty:not([hidden])").waitFor();
    expect(new URL(page.url()).searchParams.get("since")).toBe("2099-01-01T00:00:00.000Z");
    expect(await page.locator("#search-since").inputValue()).toMatch(/^2099-01-01T|^2098-12-31T/);
  });

  it("shows an attempt's request and response headers in keyboard-usable tabs", async () => {
    receiver.respondWith(() => ({
      status: 200,
      headers: { "x-receiver-note": "kept-for-the-log" },
      body: "ok",
    }));
    onTestFinished(() => receiver.respondWith(() => ({ status: 204 })));
    const webhook = await api<{ id: number }>("POST", "/api/admin/webhooks", {
      name: "With headers",
      url: receiver.url,
      secret: SECRET,
      events: ["ROOM_CREATED"],
      headers: { "X-Team-Token": "team-token-value-1234" },
    });
    const { deliveryId } = await api<{ deliveryId: number }>(
      "POST",
      `/api/admin/webhooks/${webhook.id}/test`,
    );
    await deliveryReaches(webhook.id, deliveryId, "SUCCESS");
    await signIn(`/admin/webhooks/${webhook.id}/deliveries/${deliveryId}`);
    const tabs = page.getByRole("tablist", { name: "Attempt 1" });
    await tabs.waitFor();
    const request = tabs.getByRole("tab", { name: "Request headers" });
    const response = tabs.getByRole("tab", { name: "Response headers" });
    expect(await request.getAttribute("aria-selected")).toBe("true");
    const requestPanel = page.getByRole("tabpanel", { name: "Request headers" });
    expect(await requestPanel.textContent()).toContain("x-webhook-signature-256");
    const shown = (await requestPanel.textContent())!;
    expect(shown).toMatch(/x-team-token/i);
    expect(shown).toContain("1234");
    expect(shown).not.toContain("team-token-value-1234");

    await request.focus();
    await page.keyboard.press("ArrowRight");
    expect(await response.getAttribute("aria-selected")).toBe("true");
    expect(await request.getAttribute("aria-selected")).toBe("false");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Response headers");
    const responsePanel = page.getByRole("tabpanel", { name: "Response headers" });
    expect(await responsePanel.textContent()).toContain("kept-for-the-log");
    expect(await requestPanel.isHidden()).toBe(true);
    await page.keyboard.press("Home");
    expect(await request.getAttribute("aria-selected")).toBe("true");
    await page.keyboard.press("End");
    expect(await response.getAttribute("aria-selected")).toBe("true");
    // Tab leaves the tablist for the open panel.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.getAttribute("role"))).toBe(
      "tabpanel",
    );
    expect(await request.getAttribute("tabindex")).toBe("-1");
    expect(await accessibilityViolations()).toEqual([]);
    await screenshot("delivery-headers");
  });

  it("edits the scheme, room filter, headers and rate cap, with the event catalogue", async () => {
    const webhook = await api<{ id: number }>("POST", "/api/admin/webhooks", {
      name: "Fields",
      url: receiver.url,
      secret: SECRET,
      events: ["ROOM_CREATED"],
    });
    const ops = await api<{ id: number }>("POST", "/api/rooms", { name: "ops" });
    const incidents = await api<{ id: number }>("POST", "/api/rooms", { name: "incidents" });
    await signIn(`/admin/webhooks/${webhook.id}`);
    await page.getByRole("heading", { name: "Fields", exact: true }).waitFor();
    await page.locator("#edit-endpoint > summary").click();
    // The catalogue: a description and a sample envelope per event.
    const description = page.locator("#edit-event-MESSAGE_CREATED-description");
    await description.waitFor();
    expect((await description.textContent())!.length).toBeGreaterThan(5);
    await page
      .getByRole("group", { name: /Events/ })
      .getByText("Sample payload")
      .first()
      .waitFor();
    await page
      .locator(".event-choice:has(#edit-event-MESSAGE_CREATED) details.sample summary")
      .click();
    const sample = page.locator(
      ".event-choice:has(#edit-event-MESSAGE_CREATED) details.sample pre",
    );
    expect(JSON.parse((await sample.textContent())!)).toMatchObject({ event: "MESSAGE_CREATED" });

    await page.locator("#edit-event-all").check();
    expect(await page.locator("#edit-event-ROOM_CREATED").isDisabled()).toBe(true);
    await page.locator("#edit-signature-scheme").selectOption("standard-webhooks");
    await page.locator("#edit-payload-format").selectOption("cloudevents-binary");
    await page.locator("#edit-trace-context").check();
    // Rooms are chosen by name: typed (the field suggests the names), then Add or Enter.
    await page.locator("#edit-room-add").fill("ops");
    await page.getByRole("button", { name: "Add room" }).click();
    await page.locator("#edit-room-add").fill("Incidents");
    await page.locator("#edit-room-add").press("Enter");
    await expect
      .poll(() => page.locator("#edit-rooms-chosen").textContent())
      .toMatch(/ops.*incidents/);
    await page.locator("#edit-rate-cap").fill("25");
    await page.getByRole("button", { name: "Add header" }).click();
    await page.locator("#edit-header-name-1").fill("X-Tenant");
    await page.locator("#edit-header-value-1").fill("tenant-secret-abcd");
    expect(await accessibilityViolations()).toEqual([]);
    await screenshot("endpoint-edit-fields");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.locator("#flash").getByText("saved").waitFor();
    expect(await api("GET", `/api/admin/webhooks/${webhook.id}`)).toMatchObject({
      events: ["*"],
      signatureScheme: "standard-webhooks",
      payloadFormat: "cloudevents-binary",
      traceContext: true,
      roomIds: [ops.id, incidents.id],
      maxDeliveriesPerSecond: 25,
      headers: { "x-tenant": "****abcd" },
    });
    // The page re-renders the endpoint after the flash: wait for it rather than read at once.
    await expect.poll(() => page.locator("main").textContent()).toContain("25 per second");

    // The page names the rooms.
    await expect
      .poll(() => page.locator("main .details").first().textContent())
      .toContain("ops, incidents");
    // Values are never shown back; leaving the rows alone keeps the set; an unknown room is
    // refused by name, and removing every room means every room again.
    await page.locator("#edit-endpoint > summary").click();
    expect(await page.locator("#edit-header-value-1").inputValue()).toBe("");
    expect(await page.locator("#edit-header-value-1").getAttribute("placeholder")).toMatch(/abcd/);
    await page.locator("#edit-room-add").fill("nine");
    await page.locator("#edit-room-add").press("Enter");
    await expect
      .poll(() => page.locator("#edit-room-status").textContent())
      .toContain("no room named “nine”");
    await page.getByRole("button", { name: "Remove ops" }).click();
    await page.getByRole("button", { name: "Remove incidents" }).click();
    await page.locator("#edit-rate-cap").fill("");
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect
      .poll(() => api<{ roomIds: unknown }>("GET", `/api/admin/webhooks/${webhook.id}`))
      .toMatchObject({
        roomIds: null,
        maxDeliveriesPerSecond: null,
        headers: { "x-tenant": "****abcd" },
      });
  });
  it("shows an ordered endpoint's held lane and edits its ordering", async () => {
    // Deliveries to this endpoint fail (a retry is 30 s away): its room's lane is held.
    receiver.respondWith((request) =>
      request.path.includes("lanes") ? { status: 503 } : { status: 204 },
    );
    onTestFinished(() => receiver.respondWith(() => ({ status: 204 })));
    const webhook = await api<{ id: number }>("POST", "/api/admin/webhooks", {
      name: "Ordered",
      url: `${receiver.url}?lanes`,
      secret: SECRET,
      events: ["ROOM_CREATED"],
      ordering: "room",
    });
    const room = await api<{ id: number }>("POST", "/api/rooms", { name: "lane-room" });
    await expect
      .poll(
        async () =>
          (await api<{ heldLanes: unknown[] }>("GET", `/api/admin/webhooks/${webhook.id}`))
            .heldLanes.length,
        { timeout: 10_000 },
      )
      .toBe(1);
    await signIn(`/admin/webhooks/${webhook.id}`);
    await page.getByRole("heading", { name: "Held lanes" }).waitFor();
    const lanes = page.locator(".held-lanes table");
    await expect.poll(() => lanes.textContent()).toContain(`room #${room.id}`);
    expect(await page.locator("main").textContent()).toContain("per room: each room");
    expect(await accessibilityViolations()).toEqual([]);
    await screenshot("endpoint-held-lanes");

    await page.locator("#edit-endpoint > summary").click();
    expect(await page.locator("#edit-ordering").inputValue()).toBe("room");
    await page.locator("#edit-ordering").selectOption("endpoint");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.locator("#flash").getByText("saved").waitFor();
    expect(await api("GET", `/api/admin/webhooks/${webhook.id}`)).toMatchObject({
      ordering: "endpoint",
    });
    await expect.poll(() => lanes.textContent()).toContain("whole endpoint");
  });
});
