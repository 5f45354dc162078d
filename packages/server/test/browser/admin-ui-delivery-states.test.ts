/**
 * The admin UI's endpoint and delivery states in a real browser (Debian's Chromium through
 * playwright-core) against the real server and its delivery engine: a failing endpoint's warning,
 * HELD deliveries, attempt N of M, EXHAUSTED as final, redeliveries linked both ways. Each page
 * checked is axe clean.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { DeliverySummary, Webhook } from "@parley/client";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startDeliveryWork, type BackgroundWork } from "../../src/background-work.js";
import { createTestApp, type TestApp } from "../helpers/build-app.js";
import { SQLITE } from "../helpers/dialects.js";
import { FAST_KNOBS } from "../helpers/knobs.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";
import { CHROMIUM_PATH } from "../helpers/services.js";
import { waitFor } from "../helpers/wait-for.js";

const BUILD_SCRIPT = fileURLToPath(new URL("../../scripts/build-admin-ui.mjs", import.meta.url));
const AXE_SOURCE = fs.readFileSync(
  createRequire(import.meta.url).resolve("axe-core/axe.min.js"),
  "utf8",
);

describe("admin UI delivery states in Chromium", { tags: ["chromium"] }, () => {
  let t: TestApp;
  let work: BackgroundWork[];
  let receiver: Receiver;
  let browser: Browser;
  let origin: string;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    await promisify(execFile)(process.execPath, [BUILD_SCRIPT]);
    [t, receiver, browser] = await Promise.all([
      createTestApp(SQLITE, {
        ...FAST_KNOBS,
        webhookMaxAttempts: 2,
        webhookAutoDisableMinFailures: 20,
        webhookAutoDisableAfterMs: 3_600_000,
      }),
      startReceiver(),
      chromium.launch({
        executablePath: CHROMIUM_PATH,
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
      }),
    ]);
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
    page = await context.newPage();
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() !== "error" || message.text().startsWith("Failed to load resource"))
        return;
      problems.push(`console error: ${message.text()}`);
    });
    await page.goto(`${origin}/admin/`);
    await page.evaluate(
      (token) => sessionStorage.setItem("parley.admin.token", token),
      t.admin.token,
    );
  });

  afterEach(async () => {
    await context.close();
    expect(problems).toEqual([]);
  });

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

  async function emitUser(username: string): Promise<void> {
    await t.ctx.database.transaction((tx) =>
      tx.emit("ADMIN_USER_DISABLED", { username, adminActor: "admin" }),
    );
  }

  async function deliveries(webhookId: number): Promise<DeliverySummary[]> {
    return (
      await api<{ items: DeliverySummary[] }>("GET", `/api/admin/webhooks/${webhookId}/deliveries`)
    ).items;
  }

  /** Serious and critical axe-core violations on the page as it is now. */
  async function accessibilityViolations(): Promise<string[]> {
    if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE_SOURCE);
    const violations = await page.evaluate(async () => {
      interface Violation {
        id: string;
        impact: string | null;
        help: string;
        nodes: { target: string[] }[];
      }
      const axe = (
        window as unknown as {
          axe: { run(): Promise<{ violations: Violation[]; passes: unknown[] }> };
        }
      ).axe;
      const result = await axe.run();
      if (result.passes.length === 0) throw new Error("axe-core checked no rule");
      return result.violations.map((v) => ({
        impact: v.impact,
        text: `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`,
      }));
    });
    return violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => v.text);
  }

  it("warns of a failing endpoint's auto-disable, says EXHAUSTED was final, and links a redelivery both ways", async () => {
    receiver.respondWith(() => ({ status: 500 }));
    const endpoint = await api<Webhook>("POST", "/api/admin/webhooks", {
      name: "Flaky receiver",
      url: receiver.url,
      secret: "a-receiver-secret-0123456789",
      events: ["ADMIN_USER_DISABLED"],
    });
    await emitUser("flaky");
    const [exhausted] = await waitFor("the delivery exhausted", async () => {
      const items = await deliveries(endpoint.id);
      return items[0]?.status === "EXHAUSTED" && items;
    });

    await page.goto(`${origin}/admin/webhooks/${endpoint.id}`);
    const warning = page.locator("#failing-warning");
    await warning.waitFor();
    expect(await warning.textContent()).toMatch(
      /Failing: its last 2 attempts failed .*If nothing succeeds, Parley disables it in (59|60) minutes, at .* once 18 more attempts fail\./,
    );
    const logRow = page.locator(`#deliveries tr[data-delivery-id="${exhausted!.id}"]`);
    await logRow.waitFor();
    expect(await logRow.textContent()).toContain("2 of 2");
    expect(await logRow.textContent()).toContain("none: final, all 2 attempts failed");
    expect(await accessibilityViolations()).toEqual([]);

    await logRow.getByRole("link", { name: `#${exhausted!.id}` }).click();
    await page.locator("#delivery-state").waitFor();
    expect(await page.locator("#delivery-state").textContent()).toBe(
      "Final: all 2 attempts failed and Parley will not try again. Redeliver it, or recover the time range, to send it again.",
    );
    const summary = page.locator("#delivery-summary");
    expect(await summary.textContent()).toContain("Flaky receiver");
    expect(await summary.textContent()).toContain(receiver.url);
    expect(await page.locator("#delivery-event-id").textContent()).toBe(exhausted!.eventId);
    expect(await accessibilityViolations()).toEqual([]);

    // Redelivered: the new delivery names the one it repeats, and the original lists it.
    receiver.respondWith(() => ({ status: 204 }));
    await page.getByRole("button", { name: "Redeliver" }).click();
    await page.locator("#redelivery-of").waitFor();
    expect(await page.locator("#redelivery-of").textContent()).toBe(`#${exhausted!.id}`);
    await expect
      .poll(() => page.locator("#delivery-state").textContent(), { interval: 200, timeout: 10_000 })
      .toBe("Delivered: the receiver accepted attempt 1 of 2.");
    const copyId = Number(new URL(page.url()).pathname.split("/").at(-1));
    await page.locator("#redelivery-of a").click();
    await page.locator("#redeliveries").waitFor();
    expect(await page.locator("#redeliveries").textContent()).toBe(`#${copyId} SUCCESS`);
    expect(await accessibilityViolations()).toEqual([]);
  });

  it("shows a disabled endpoint's deliveries as HELD, with no next attempt until it is enabled", async () => {
    receiver.respondWith(() => ({ status: 204 }));
    const endpoint = await api<Webhook>("POST", "/api/admin/webhooks", {
      name: "Paused receiver",
      url: receiver.url,
      secret: "a-receiver-secret-0123456789",
      events: ["ADMIN_USER_DISABLED"],
    });
    // Queued, and the endpoint disabled, in one commit: the delivery was never attempted.
    await t.ctx.database.transaction(async (tx) => {
      await tx.emit("ADMIN_USER_DISABLED", { username: "paused", adminActor: "admin" });
      await tx.db
        .updateTable("webhooks")
        .set({ enabled: 0, disabled_reason: "manual", disabled_at: Date.now() })
        .where("id", "=", endpoint.id)
        .execute();
    });
    const [held] = await deliveries(endpoint.id);
    expect(held).toMatchObject({ status: "PENDING", held: true });

    await page.goto(`${origin}/admin/webhooks/${endpoint.id}`);
    const logRow = page.locator(`#deliveries tr[data-delivery-id="${held!.id}"]`);
    await logRow.waitFor();
    expect(await logRow.getAttribute("data-held")).toBe("true");
    expect(await logRow.locator(".badge").textContent()).toBe("HELD");
    expect(await logRow.textContent()).toContain("held until the endpoint is enabled");
    expect(await page.locator("#disabled-reason").textContent()).toContain(
      "its deliveries are held until it is enabled again",
    );
    expect(await accessibilityViolations()).toEqual([]);

    await logRow.getByRole("link", { name: `#${held!.id}` }).click();
    await page.locator("#delivery-state").waitFor();
    expect(await page.locator("#delivery-state").textContent()).toBe(
      "Held: its endpoint is disabled. It goes out when the endpoint is enabled again.",
    );
    expect(await page.locator("#delivery-status-badge").textContent()).toBe("HELD");
    expect(await accessibilityViolations()).toEqual([]);

    // Enabled: the delivery goes out, and the page (live) says so.
    await api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { enabled: true });
    await expect
      .poll(() => page.locator("#delivery-status-badge").textContent(), {
        interval: 200,
        timeout: 10_000,
      })
      .toBe("SUCCESS");
  });

  it("sends a sample of any event as a test and shows the receiver's answer when it arrives", async () => {
    receiver.respondWith(() => ({ status: 202 }));
    const endpoint = await api<Webhook>("POST", "/api/admin/webhooks", {
      name: "Sample taker",
      url: receiver.url,
      secret: "a-receiver-secret-0123456789",
      events: ["ROOM_CREATED"],
    });
    const before = receiver.requests.length;
    await page.goto(`${origin}/admin/webhooks/${endpoint.id}`);
    await page.locator("#test-event").selectOption("MESSAGE_CREATED");
    await page.getByRole("button", { name: "Send test event" }).click();
    const result = page.locator("#test-result");
    await expect
      .poll(() => result.textContent(), { interval: 200, timeout: 10_000 })
      .toMatch(
        /^Test delivery #\d+ \(MESSAGE_CREATED, attempt 1 of 2\): SUCCESS Delivered: .*The receiver answered 202 in \d+ ms\.$/,
      );
    const [request] = (await receiver.waitForRequests(before + 1)).slice(before);
    expect(JSON.parse(request!.body.toString("utf8"))).toMatchObject({
      event: "MESSAGE_CREATED",
      webhookId: endpoint.id,
      data: { roomId: expect.any(Number), messageId: expect.any(Number) },
    });
    expect(await accessibilityViolations()).toEqual([]);
  });

  it("counts the events a disabled endpoint missed, asks to confirm, then sends them", async () => {
    receiver.respondWith(() => ({ status: 204 }));
    const endpoint = await api<Webhook>("POST", "/api/admin/webhooks", {
      name: "Back from holiday",
      url: receiver.url,
      secret: "a-receiver-secret-0123456789",
      events: ["ADMIN_USER_DELETED"],
      enabled: false,
    });
    for (const username of ["gone-1", "gone-2"])
      await t.ctx.database.transaction((tx) =>
        tx.emit("ADMIN_USER_DELETED", { username, adminActor: "admin" }),
      );
    await api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { enabled: true });
    expect(await deliveries(endpoint.id)).toEqual([]);

    const before = receiver.requests.length;
    await page.goto(`${origin}/admin/webhooks/${endpoint.id}`);
    await page.locator("#replay-missing > summary").click();
    await page.getByRole("button", { name: "Count missed events" }).click();
    const question = page.locator("#replay-question");
    await question.waitFor();
    expect(await question.textContent()).toMatch(/^2 missed events since .* will be sent\.$/);
    expect(await accessibilityViolations()).toEqual([]);
    await page.getByRole("button", { name: "Confirm: send 2 events" }).click();
    await expect
      .poll(() => page.locator("#replay-result").textContent())
      .toBe("Queued 2 missed events.");
    const sent = (await receiver.waitForRequests(before + 2)).slice(before);
    expect(
      sent
        .map(
          (r) =>
            (JSON.parse(r.body.toString("utf8")) as { data: { username: string } }).data.username,
        )
        .sort(),
    ).toEqual(["gone-1", "gone-2"]);
    // Counted again: nothing is missing any more.
    await page.getByRole("button", { name: "Count missed events" }).click();
    await expect
      .poll(() => page.locator("#replay-result").textContent())
      .toBe("No missed event since then: nothing to replay.");
  });
});
