/**
 * What the chat page's browser tests share: the page built once, a real server on a loopback port
 * (SQLite), Debian's Chromium, a signed-in page per user in a context of its own (any size, the
 * Notification permission granted and every notification recorded), and axe-core.
 * Script errors, CSP violations and dialogs on any page are collected in `problems`: none may happen.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import net, { type AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import type { ConfigOverrides } from "../../src/config/load-config.js";
import { createTestApp, type TestApp, type TestUser } from "../helpers/build-app.js";
import { SQLITE } from "../helpers/dialects.js";
import { CHROMIUM_PATH } from "../helpers/services.js";

const BUILD_SCRIPT = fileURLToPath(new URL("../../scripts/build-chat-ui.mjs", import.meta.url));
export const SCREENSHOTS = fileURLToPath(
  new URL("../../../../test-results/chat-ui/", import.meta.url),
);
const AXE_SOURCE = fs.readFileSync(
  createRequire(import.meta.url).resolve("axe-core/axe.min.js"),
  "utf8",
);

export interface PageOptions {
  viewport?: { width: number; height: number };
}

/** A notification the page raised (recorded by wrapping window.Notification). */
export interface RecordedNotification {
  title: string;
  body: string | undefined;
}

export interface ChatHarness {
  t: TestApp;
  browser: Browser;
  origin: string;
  problems: string[];
  /** A new browser context (nobody signed in) with its page at /app/. */
  openPage(label: string, options?: PageOptions): Promise<Page>;
  /** A page signed in as `user` with its token. */
  signedIn(user: TestUser, options?: PageOptions): Promise<Page>;
  close(): Promise<void>;
}

/**
 * `port`: listen there instead of on any free port (a test that must know its address before the
 * app is built, for PARLEY_PUBLIC_BASE_URL, picks one with `freePort()`).
 */
export async function startChatHarness(
  overrides: ConfigOverrides = {},
  port = 0,
): Promise<ChatHarness> {
  await promisify(execFile)(process.execPath, [BUILD_SCRIPT]);
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const [t, browser] = await Promise.all([
    createTestApp(SQLITE, { presenceGraceMs: 500, ...overrides }),
    chromium.launch({
      executablePath: CHROMIUM_PATH,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    }),
  ]);
  await t.app.listen({ port, host: "127.0.0.1" });
  const origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];

  const openPage = async (label: string, options: PageOptions = {}): Promise<Page> => {
    const context = await browser.newContext({
      viewport: options.viewport ?? { width: 1100, height: 800 },
    });
    await context.grantPermissions(["notifications"], { origin });
    contexts.push(context);
    await context.addInitScript(() => {
      const Native = window.Notification;
      const shown: { title: string; body: string | undefined }[] = [];
      const w = window as unknown as {
        __notifications: typeof shown;
        __hidden: boolean;
      };
      w.__notifications = shown;
      window.Notification = class extends Native {
        constructor(title: string, options?: NotificationOptions) {
          super(title, options);
          shown.push({ title, body: options?.body });
        }
      };
      // Headless pages are always visible: a test hides one by setting window.__hidden.
      w.__hidden = false;
      Object.defineProperty(document, "visibilityState", {
        get: () => (w.__hidden ? "hidden" : "visible"),
      });
      Object.defineProperty(document, "hidden", { get: () => w.__hidden });
    });
    const page = await context.newPage();
    page.on("pageerror", (error) => problems.push(`${label}: ${error.message}`));
    page.on("dialog", (dialog) => {
      problems.push(`${label}: dialog ${dialog.message()}`);
      void dialog.dismiss();
    });
    page.on("console", (message) => {
      const text = message.text();
      if (message.type() !== "error" || text.startsWith("Failed to load resource")) return;
      problems.push(`${label}: console ${text}`);
    });
    await page.goto(`${origin}/app/`);
    return page;
  };

  const signedIn = async (user: TestUser, options: PageOptions = {}): Promise<Page> => {
    const page = await openPage(user.username, options);
    await page.locator("#token").fill(user.token);
    await page.locator("#token").press("Enter");
    await page.locator("#me").getByText(user.username).waitFor();
    return page;
  };

  return {
    t,
    browser,
    origin,
    problems,
    openPage,
    signedIn,
    close: async () => {
      for (const context of contexts) await context.close();
      await browser.close();
      await t.close();
    },
  };
}

/** A loopback port free right now. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Hides or shows the page as far as the page can tell (document.visibilityState). */
export async function setHidden(page: Page, hidden: boolean): Promise<void> {
  await page.evaluate((value) => {
    (window as unknown as { __hidden: boolean }).__hidden = value;
    document.dispatchEvent(new Event("visibilitychange"));
  }, hidden);
}

export async function notificationsOf(page: Page): Promise<RecordedNotification[]> {
  return page.evaluate(
    () => (window as unknown as { __notifications: RecordedNotification[] }).__notifications,
  );
}

/** How far the page scrolls sideways past the viewport, in CSS pixels (0: not at all). */
export async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
}

/** Serious and critical axe-core violations on the page as it is now: none may remain. */
export async function accessibilityViolations(page: Page): Promise<string[]> {
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
