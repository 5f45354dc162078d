/**
 * What admin UI browser tests share: the bundle built from the current sources, a real server on a
 * loopback port (SQLite) with its delivery work running and an admin with a password, Debian's
 * Chromium, a page per test signed in with the admin's token, axe-core, and the problems (dialogs,
 * script errors, CSP violations) no page may have.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { expect } from "vitest";
import { startDeliveryWork, type BackgroundWork } from "../../src/background-work.js";
import type { ConfigOverrides } from "../../src/config/load-config.js";
import { createTestApp, type TestApp } from "../helpers/build-app.js";
import { SQLITE } from "../helpers/dialects.js";
import { CHROMIUM_PATH } from "../helpers/services.js";

const BUILD_SCRIPT = fileURLToPath(new URL("../../scripts/build-admin-ui.mjs", import.meta.url));
const SCREENSHOTS =
  process.env.PARLEY_UI_SCREENSHOTS ??
  fileURLToPath(new URL("../../../../test-results/admin-ui", import.meta.url));
const AXE_SOURCE = fs.readFileSync(
  createRequire(import.meta.url).resolve("axe-core/axe.min.js"),
  "utf8",
);

export interface AdminHarness {
  t: TestApp;
  origin: string;
  browser: Browser;
  /** A fresh context (own storage and cookies) and page, signed in at `path` with a token. */
  open(path: string, viewport?: { width: number; height: number }): Promise<Page>;
  /** A fresh context and page, nobody signed in. */
  openAnonymous(path: string): Promise<Page>;
  /** Serious and critical axe-core violations on the page as it is now. */
  violations(page: Page): Promise<string[]>;
  screenshot(page: Page, name: string): Promise<void>;
  /** An admin API call through the app; fails the test unless it answers 2xx. */
  api<T = unknown>(method: string, url: string, payload?: object): Promise<T>;
  /** Closes every context; fails the test when a page had a problem. */
  endTest(): Promise<void>;
  close(): Promise<void>;
}

export async function startAdminHarness(overrides: ConfigOverrides = {}): Promise<AdminHarness> {
  await promisify(execFile)(process.execPath, [BUILD_SCRIPT]);
  const [t, browser] = await Promise.all([
    createTestApp(SQLITE, overrides),
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
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  const origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const work: BackgroundWork[] = startDeliveryWork(t.ctx, t.app.metrics);
  let contexts: BrowserContext[] = [];
  let problems: string[] = [];

  const newPage = async (viewport = { width: 1280, height: 900 }): Promise<Page> => {
    const context = await browser.newContext({ viewport });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
    contexts.push(context);
    const page = await context.newPage();
    page.on("dialog", (dialog) => {
      problems.push(`dialog ${dialog.type()}: ${dialog.message()}`);
      void dialog.dismiss();
    });
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() !== "error" || message.text().startsWith("Failed to load resource"))
        return;
      problems.push(`console error: ${message.text()}`);
    });
    return page;
  };

  return {
    t,
    origin,
    browser,
    async open(path, viewport) {
      const page = await newPage(viewport);
      await page.goto(`${origin}${path}`);
      await page.getByText("Use a token instead").click();
      await page.locator("#token").fill(t.admin.token);
      await page.getByRole("button", { name: "Sign in with the token" }).click();
      await page.locator("#sign-out").waitFor();
      return page;
    },
    async openAnonymous(path) {
      const page = await newPage();
      await page.goto(`${origin}${path}`);
      return page;
    },
    async violations(page) {
      if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE_SOURCE);
      const found = await page.evaluate(async () => {
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
          id: v.id,
          impact: v.impact,
          help: v.help,
          targets: v.nodes.map((n) => n.target.join(" ")),
        }));
      });
      return found
        .filter((v) => v.impact === "serious" || v.impact === "critical")
        .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.targets.join(", ")})`);
    },
    async screenshot(page, name) {
      fs.mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });
    },
    async api<T>(method: string, url: string, payload?: object): Promise<T> {
      const res = await t.app.inject({
        method: method as "GET",
        url,
        headers: t.admin.headers,
        ...(payload === undefined ? {} : { payload }),
      });
      expect(res.statusCode, res.body).toBeLessThan(300);
      return (res.body === "" ? undefined : res.json()) as T;
    },
    async endTest() {
      const seen = problems;
      problems = [];
      for (const context of contexts) await context.close();
      contexts = [];
      expect(seen).toEqual([]);
    },
    async close() {
      for (const context of contexts) await context.close().catch(() => undefined);
      await browser.close();
      for (const part of work) await part.stop();
      await t.close();
    },
  };
}
