/**
 * The chat page (/app/) in Debian's Chromium against the real server: two users in two browser
 * contexts chat live, see each other present, and open a peer-to-peer WebRTC data channel through
 * the call signalling; edit and delete messages, reply in threads and mention each other, each
 * seeing the other's changes live; axe-core finds no serious or critical accessibility problem.
 * Screenshots go to test-results/chat-ui/ (git-ignored).
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../helpers/build-app.js";
import { SQLITE } from "../helpers/dialects.js";
import { CHROMIUM_PATH } from "../helpers/services.js";

const BUILD_SCRIPT = fileURLToPath(new URL("../../scripts/build-chat-ui.mjs", import.meta.url));
const SCREENSHOTS = fileURLToPath(new URL("../../../../test-results/chat-ui/", import.meta.url));
/** axe-core, run inside the page to check accessibility (as the admin UI's tests do). */
const AXE_SOURCE = fs.readFileSync(
  createRequire(import.meta.url).resolve("axe-core/axe.min.js"),
  "utf8",
);

describe("chat page in Chromium", { tags: ["chromium"] }, () => {
  let t: TestApp;
  let browser: Browser;
  let origin: string;
  let alice: TestUser;
  let bob: TestUser;
  let roomId: number;
  const contexts: BrowserContext[] = [];
  /** Script errors (CSP violations included) and dialogs: none may happen. */
  const problems: string[] = [];

  beforeAll(async () => {
    await promisify(execFile)(process.execPath, [BUILD_SCRIPT]);
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    [t, browser] = await Promise.all([
      createTestApp(SQLITE, { presenceGraceMs: 500 }),
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
          // WebRTC between two pages of one machine with no network but loopback: real host
          // addresses instead of mDNS names (nothing resolves them here), loopback allowed.
          "--disable-features=WebRtcHideLocalIpsWithMdns",
          "--allow-loopback-in-peer-connection",
          "--use-fake-ui-for-media-stream",
          "--use-fake-device-for-media-stream",
        ],
      }),
    ]);
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    alice = await t.user("user", "alice");
    bob = await t.user("user", "bob");
    const room = await t.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: alice.headers,
      payload: { name: "general" },
    });
    roomId = room.json().id;
    await t.app.inject({ method: "POST", url: `/api/rooms/${roomId}/join`, headers: bob.headers });
    // History to scroll through.
    for (let i = 1; i <= 45; i++) {
      await t.app.inject({
        method: "POST",
        url: `/api/rooms/${roomId}/messages`,
        headers: i % 2 ? alice.headers : bob.headers,
        payload: { content: `history ${i}` },
      });
    }
  });

  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await t?.close();
    expect(problems).toEqual([]);
  });

  async function signedIn(user: TestUser): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    contexts.push(context);
    // Keep a handle on the page's sockets, so a test can cut the connection as a network would.
    await context.addInitScript(() => {
      const Native = window.WebSocket;
      const sockets: WebSocket[] = [];
      (window as unknown as { __sockets: WebSocket[] }).__sockets = sockets;
      window.WebSocket = class extends Native {
        constructor(url: string | URL, protocols?: string | string[]) {
          super(url, protocols);
          sockets.push(this);
        }
      };
    });
    const page = await context.newPage();
    page.on("pageerror", (error) => problems.push(`${user.username}: ${error.message}`));
    page.on("dialog", (dialog) => {
      problems.push(`${user.username}: dialog ${dialog.message()}`);
      void dialog.dismiss();
    });
    page.on("console", (message) => {
      const text = message.text();
      if (message.type() !== "error" || text.startsWith("Failed to load resource")) return;
      // The reconnect test takes the page offline on purpose: Chromium logs each retry it makes
      // meanwhile as a failed WebSocket connection with this reason.
      if (text.includes("net::ERR_INTERNET_DISCONNECTED")) return;
      problems.push(`${user.username}: console ${text}`);
    });
    await page.goto(`${origin}/app/`);
    await page.locator("#token").fill(user.token);
    await page.locator("#token").press("Enter");
    await page.locator("#me").getByText(user.username).waitFor();
    return page;
  }

  /** A room of its own for a test, both users in it; answers its id. */
  async function roomOfBoth(name: string): Promise<number> {
    const res = await t.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: alice.headers,
      payload: { name },
    });
    const id = res.json().id as number;
    await t.app.inject({ method: "POST", url: `/api/rooms/${id}/join`, headers: bob.headers });
    return id;
  }

  /** Posts as `user` through the API; answers the message's id. */
  async function post(
    user: TestUser,
    room: number,
    content: string,
    threadId?: number,
  ): Promise<number> {
    const res = await t.app.inject({
      method: "POST",
      url: `/api/rooms/${room}/messages`,
      headers: user.headers,
      payload: { content, ...(threadId === undefined ? {} : { threadId }) },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as number;
  }

  /** Signs in and opens a room. */
  async function inRoom(user: TestUser, room: number): Promise<Page> {
    const page = await signedIn(user);
    await page.locator(`[data-room-id="${room}"]`).click();
    await page.locator(`[data-room-id="${room}"].current`).waitFor();
    return page;
  }

  /** Serious and critical axe-core violations on the page as it is now: none may remain. */
  async function accessibilityViolations(page: Page): Promise<string[]> {
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

  it("two users chat live, see each other present, and talk over a WebRTC data channel", async () => {
    const a = await signedIn(alice);
    const b = await signedIn(bob);

    // History: the newest page, then older messages when scrolled to the top.
    await a.locator(".message", { hasText: "history 45" }).waitFor();
    const oldest = a.locator(".message .content").getByText("history 1", { exact: true });
    expect(await oldest.count()).toBe(0);
    await a.locator("#messages").evaluate((list) => (list.scrollTop = 0));
    await oldest.waitFor();
    // Every message once, in order, across the two pages.
    const shown = (await a.locator(".message .content").allTextContents()).map((text) =>
      text.trim(),
    );
    expect(shown).toEqual(Array.from({ length: 45 }, (_, i) => `history ${i + 1}`));

    // Presence: each page lists both.
    for (const page of [a, b]) {
      await page.locator("#present .person", { hasText: "alice" }).waitFor();
      await page.locator("#present .person", { hasText: "bob" }).waitFor();
    }

    // A message from alice reaches bob's page within a second.
    await a.locator("#composer").fill("Hello **bob**, see [the docs](https://example.com/docs)");
    await a.locator("#preview strong", { hasText: "bob" }).waitFor();
    await a.screenshot({ path: `${SCREENSHOTS}composer-preview.png` });
    const sentAt = Date.now();
    await a.getByRole("button", { name: "Send", exact: true }).click();
    await b.locator(".message .content strong", { hasText: "bob" }).waitFor({ timeout: 1_000 });
    const latency = Date.now() - sentAt;
    expect(latency).toBeLessThan(1_000);
    await b.screenshot({ path: `${SCREENSHOTS}message-received.png` });

    // A call: alice starts it, bob joins and offers; the data channel carries a message.
    await a.getByRole("button", { name: "Start or join call" }).click();
    await a.locator("#call-status", { hasText: "In the call" }).waitFor();
    await b.getByRole("button", { name: "Start or join call" }).click();
    await a.locator("#call-status.connected").waitFor({ timeout: 15_000 });
    await b.locator("#call-status.connected").waitFor({ timeout: 15_000 });
    await a.locator("#call-input").fill("hello over the data channel");
    await a.getByRole("button", { name: "Send over call" }).click();
    await b.locator("#call-log li", { hasText: "alice: hello over the data channel" }).waitFor();
    await a.screenshot({ path: `${SCREENSHOTS}call-alice.png` });
    await b.screenshot({ path: `${SCREENSHOTS}call-bob.png` });

    // bob goes away: after the grace, alice's presence list shrinks.
    await b.context().close();
    contexts.splice(contexts.indexOf(b.context()), 1);
    await a.locator("#present .person", { hasText: "bob" }).waitFor({ state: "detached" });
    expect(await a.locator("#present .person").allTextContents()).toEqual(["alice"]);
  }, 60_000);

  it("shows an image in a message as a link, and never fetches it", async () => {
    const pixel = "https://tracker.example/pixel.png";
    const b = await signedIn(bob);
    const fetched: string[] = [];
    b.on("request", (request) => {
      if (request.url().startsWith("https://tracker.example/")) fetched.push(request.url());
    });
    await b.locator(".message", { hasText: "history 45" }).first().waitFor();
    await t.app.inject({
      method: "POST",
      url: `/api/rooms/${roomId}/messages`,
      headers: alice.headers,
      payload: {
        content: `look ![the pixel](${pixel}) and [![build](${pixel})](https://ci.example/42)`,
      },
    });
    const message = b.locator(".message", { hasText: "look" });
    await message.locator(`a[href="${pixel}"]`, { hasText: "the pixel" }).waitFor();
    expect(await message.locator('a[href="https://ci.example/42"]').textContent()).toBe("build");
    expect(await message.locator("img").count()).toBe(0);
    // The composer's preview renders the same way.
    await b.locator("#composer").fill(`![t](${pixel})`);
    await b.locator(`#preview a[href="${pixel}"]`).waitFor();
    expect(await b.locator("#preview img").count()).toBe(0);
    await b.waitForTimeout(200);
    expect(fetched).toEqual([]);
  }, 60_000);

  it("marks unread messages in rooms not shown, and shows a banner while reconnecting", async () => {
    const other = await t.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: alice.headers,
      payload: { name: "random" },
    });
    const otherId = other.json().id as number;
    await t.app.inject({ method: "POST", url: `/api/rooms/${otherId}/join`, headers: bob.headers });
    const a = await signedIn(alice);
    await a.locator(".message", { hasText: "history 45" }).first().waitFor();
    // Others' messages are unread; the user's own (from another device) are not.
    await t.app.inject({
      method: "POST",
      url: `/api/rooms/${otherId}/messages`,
      headers: alice.headers,
      payload: { content: "mine, from my phone" },
    });
    await t.app.inject({
      method: "POST",
      url: `/api/rooms/${otherId}/messages`,
      headers: bob.headers,
      payload: { content: "elsewhere" },
    });
    const badge = a.locator(`[data-room-id="${otherId}"] .unread`);
    await badge.waitFor();
    expect(await badge.textContent()).toBe("1");
    await a.locator(`[data-room-id="${otherId}"]`).click();
    await a.locator(".message", { hasText: "elsewhere" }).waitFor();
    expect(await badge.count()).toBe(0);

    // The network goes away: the banner shows while the client retries.
    await a.context().setOffline(true);
    await a.evaluate(() => {
      for (const socket of (window as unknown as { __sockets: WebSocket[] }).__sockets)
        socket.close();
    });
    await a.locator("#banner").waitFor({ state: "visible" });
    await a.screenshot({ path: `${SCREENSHOTS}reconnecting.png` });
    // A message posted meanwhile shows up once the connection is back (resume), banner gone.
    await t.app.inject({
      method: "POST",
      url: `/api/rooms/${otherId}/messages`,
      headers: alice.headers,
      payload: { content: "while you were away" },
    });
    await a.context().setOffline(false);
    await a.locator(".message", { hasText: "while you were away" }).waitFor({ timeout: 15_000 });
    await a.locator("#banner").waitFor({ state: "hidden" });
    expect(await a.locator(".message", { hasText: "while you were away" }).count()).toBe(1);
  }, 60_000);

  it("an edit and a delete by one user appear live on the other's page", async () => {
    const room = await roomOfBoth("edits");
    const id = await post(alice, room, "deploy at 5");
    await post(bob, room, "bob's own line");
    const a = await inRoom(alice, room);
    const b = await inRoom(bob, room);
    const onA = a.locator(`#messages [data-message-id="${id}"]`);
    const onB = b.locator(`#messages [data-message-id="${id}"]`);
    await onB.getByText("deploy at 5").waitFor();
    // Only the author is offered edit and delete.
    expect(await onB.getByRole("button", { name: "Edit" }).count()).toBe(0);
    expect(await onB.getByRole("button", { name: "Delete" }).count()).toBe(0);

    // alice edits in place, from the keyboard: the box takes focus, Enter saves.
    await onA.getByRole("button", { name: "Edit" }).click();
    const box = a.getByRole("textbox", { name: "Edit message" });
    expect(await box.evaluate((element) => element === document.activeElement)).toBe(true);
    await box.fill("deploy at **6**");
    await box.press("Enter");
    await onB.locator(".content strong", { hasText: "6" }).waitFor({ timeout: 2_000 });
    await onB.locator(".edited").waitFor();
    expect(await onB.textContent()).not.toContain("deploy at 5");
    // Focus is back on alice's Edit button.
    expect(
      await a.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.action),
    ).toBe("edit");
    await b.locator("#live-status", { hasText: "edited a message" }).waitFor();
    await b.screenshot({ path: `${SCREENSHOTS}edit-seen.png` });

    // Escape leaves an edit without saving.
    await onA.getByRole("button", { name: "Edit" }).click();
    await a.getByRole("textbox", { name: "Edit message" }).fill("never saved");
    expect(await accessibilityViolations(a)).toEqual([]);
    await a.getByRole("textbox", { name: "Edit message" }).press("Escape");
    expect(await onA.locator(".content").textContent()).toContain("deploy at 6");

    // Delete asks in place first; Cancel keeps the message.
    await onA.getByRole("button", { name: "Delete" }).click();
    await a.getByRole("button", { name: "Cancel" }).click();
    await onA.getByRole("button", { name: "Delete" }).click();
    expect(await accessibilityViolations(a)).toEqual([]);
    await a.getByRole("button", { name: "Delete message" }).click();
    await onB.getByText("message deleted").waitFor({ timeout: 2_000 });
    expect(await onB.textContent()).not.toContain("deploy at");
    await onA.getByText("message deleted").waitFor();
    await b.locator("#live-status", { hasText: "alice deleted a message" }).waitFor();
    // A reload shows the tombstone in place, between the messages around it.
    await b.reload();
    await b.locator(`[data-room-id="${room}"]`).click();
    await b
      .locator(`#messages [data-message-id="${id}"]`, { hasText: "message deleted" })
      .waitFor();
  }, 60_000);

  it("replies in a thread: the count on the message and the replies, live on both pages", async () => {
    const room = await roomOfBoth("threads");
    const parent = await post(alice, room, "release notes?");
    await post(alice, room, "first reply", parent);
    const a = await inRoom(alice, room);
    const b = await inRoom(bob, room);
    const parentOnA = a.locator(`#messages [data-message-id="${parent}"]`);
    await parentOnA.getByRole("button", { name: "1 reply" }).waitFor();

    // bob opens the thread: the first reply is there, focus in the reply box.
    await b
      .locator(`#messages [data-message-id="${parent}"]`)
      .getByRole("button", { name: "1 reply" })
      .click();
    const thread = b.getByRole("complementary", { name: "Thread" });
    await thread.locator(".message", { hasText: "first reply" }).waitFor();
    expect(await b.evaluate(() => document.activeElement?.id)).toBe("thread-composer");
    await b.locator("#thread-composer").fill("second reply");
    await b.locator("#thread-composer").press("Enter");
    await thread.locator(".message", { hasText: "second reply" }).waitFor();
    // Oldest first; not in the room's main list.
    expect(
      (await thread.locator("#thread-replies .message .content").allTextContents()).map((text) =>
        text.trim(),
      ),
    ).toEqual(["first reply", "second reply"]);
    expect(await b.locator("#messages").textContent()).not.toContain("second reply");
    // alice sees the count grow live.
    await parentOnA.getByRole("button", { name: "2 replies" }).waitFor({ timeout: 2_000 });

    // alice opens it too; bob deletes his reply: a tombstone on alice's page keeps its place.
    await parentOnA.getByRole("button", { name: "2 replies" }).click();
    const threadOnA = a.getByRole("complementary", { name: "Thread" });
    await threadOnA.locator(".message", { hasText: "second reply" }).waitFor();
    await thread
      .locator(".message", { hasText: "second reply" })
      .getByRole("button", { name: "Delete" })
      .click();
    await b.getByRole("button", { name: "Delete message" }).click();
    await threadOnA
      .locator("#thread-replies .message")
      .nth(1)
      .getByText("message deleted")
      .waitFor({
        timeout: 2_000,
      });
    expect(await threadOnA.locator("#thread-replies .message").count()).toBe(2);
    await a.screenshot({ path: `${SCREENSHOTS}thread.png` });
    expect(await accessibilityViolations(a)).toEqual([]);

    // Escape closes the thread and gives focus back to the message's thread button.
    await a.locator("#thread-composer").focus();
    await a.keyboard.press("Escape");
    await threadOnA.waitFor({ state: "detached" });
    expect(
      await a.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.action),
    ).toBe("thread");
  }, 60_000);

  it("completes @names while typing and highlights mentions, your own more strongly", async () => {
    const room = await roomOfBoth("mentions");
    await post(alice, room, "hello from alice");
    const a = await inRoom(alice, room);
    const b = await inRoom(bob, room);
    await b.locator(".message", { hasText: "hello from alice" }).waitFor();

    // bob types "@al": the list offers alice; arrows and Enter take her name.
    await b.locator("#composer").pressSequentially("thanks @al");
    const options = b.locator("#composer-mentions [role=option]");
    await options.first().waitFor();
    expect(await options.allTextContents()).toEqual(["@alice"]);
    expect(await b.locator("#composer").getAttribute("aria-activedescendant")).toBe(
      "composer-mention-0",
    );
    await b.locator("#composer").press("Enter");
    expect(await b.locator("#composer").inputValue()).toBe("thanks @alice ");
    expect(await b.locator("#composer-mentions").isHidden()).toBe(true);
    await b.locator("#composer").pressSequentially("(not `@alice` in code)");
    await b.locator("#composer").press("Enter");

    const message = a.locator(".message", { hasText: "thanks" });
    const mention = message.locator(".content .mention");
    await mention.waitFor({ timeout: 2_000 });
    expect(await mention.count()).toBe(1);
    expect(await mention.getAttribute("class")).toContain("mention-me");
    expect(await message.locator("code").textContent()).toBe("@alice");
    // On bob's page the mention of alice is marked, not as his own.
    const onB = b.locator(".message", { hasText: "thanks" }).locator(".content .mention");
    await onB.waitFor();
    expect(await onB.getAttribute("class")).toBe("mention");
    await a.screenshot({ path: `${SCREENSHOTS}mention.png` });

    // Any case, and a sentence's full stop is not part of the name.
    await post(bob, room, "ping @Alice.");
    const ping = a.locator(".message", { hasText: "ping" }).locator(".content");
    await ping.locator(".mention-me").waitFor();
    expect(await ping.locator(".mention-me").textContent()).toBe("@Alice");
    expect((await ping.textContent())?.trim()).toBe("ping @Alice.");
    // An e-mail address or a bare URL is no mention.
    await post(bob, room, "write to ops@alice.example or see https://git.example/@alice");
    await a.locator(".message", { hasText: "ops@" }).waitFor();
    expect(await a.locator(".message", { hasText: "ops@" }).locator(".mention").count()).toBe(0);
    expect(await accessibilityViolations(a)).toEqual([]);
  }, 60_000);

  it("uploads files from the composer: an image shows as a preview, another file as a download link", async () => {
    const room = await roomOfBoth("files");
    const a = await inRoom(alice, room);
    const b = await inRoom(bob, room);
    // A 2x2 PNG, and a text file.
    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==",
      "base64",
    );
    await a.locator("#composer-files").setInputFiles([
      { name: "dot.png", mimeType: "image/png", buffer: png },
      { name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("plain notes") },
    ]);
    await a.locator(".attachments li", { hasText: "dot.png" }).waitFor();
    await a.locator(".attachments li", { hasText: "notes.txt" }).waitFor();
    // Nothing typed: the files go with their names as the text.
    await a.locator("#composer").press("Enter");
    for (const page of [a, b]) {
      const message = page.locator("#messages .message", { hasText: "dot.png, notes.txt" });
      await message.locator('img.file-preview[alt="dot.png"]').waitFor();
      // Signed in with a token, the page fetched the bytes itself: the image really decoded.
      await page.waitForFunction(
        () =>
          (document.querySelector('img.file-preview[alt="dot.png"]') as HTMLImageElement | null)
            ?.naturalWidth === 2,
      );
      await message.locator("a[download]", { hasText: "notes.txt" }).waitFor();
    }
    expect(await a.locator(".attachments li").count()).toBe(0);
    const [download] = await Promise.all([
      b.waitForEvent("download"),
      b.locator("#messages a[download]", { hasText: "notes.txt" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("notes.txt");
  }, 60_000);

  it("renders :shortcodes: as emoji in messages and the preview, never in code", async () => {
    const room = await roomOfBoth("shortcodes");
    const b = await inRoom(bob, room);
    await post(alice, room, "shipped :tada: (not `:tada:`, and :no_such_code: stays)");
    const content = b.locator(".message .content", { hasText: "shipped" });
    await content.waitFor();
    expect((await content.textContent())?.trim()).toBe(
      "shipped 🎉 (not :tada:, and :no_such_code: stays)",
    );
    expect(await content.locator("code").textContent()).toBe(":tada:");
    await b.locator("#composer").fill(":+1: ok");
    await b.locator("#preview .content", { hasText: "👍 ok" }).waitFor();
  }, 60_000);

  it("catches up after a reconnect on the edits and deletions made while it was away", async () => {
    const room = await roomOfBoth("away");
    const edited = await post(alice, room, "draft wording");
    const removed = await post(alice, room, "to be removed");
    const b = await inRoom(bob, room);
    await b.locator(".message", { hasText: "to be removed" }).waitFor();

    await b.context().setOffline(true);
    await b.evaluate(() => {
      for (const socket of (window as unknown as { __sockets: WebSocket[] }).__sockets)
        socket.close();
    });
    await b.locator("#banner").waitFor({ state: "visible" });
    // The stream's resume replays created messages only: these two come from ?updatedSince=.
    for (const [method, url, payload] of [
      ["PATCH", `/api/rooms/${room}/messages/${edited}`, { content: "final wording" }],
      ["DELETE", `/api/rooms/${room}/messages/${removed}`, undefined],
    ] as const) {
      const res = await t.app.inject({
        method,
        url,
        headers: alice.headers,
        ...(payload ? { payload } : {}),
      });
      expect(res.statusCode, res.body).toBeLessThan(300);
    }
    await b.context().setOffline(false);
    await b.locator("#banner").waitFor({ state: "hidden", timeout: 15_000 });
    await b
      .locator(`[data-message-id="${edited}"] .content`, { hasText: "final wording" })
      .waitFor({ timeout: 5_000 });
    await b
      .locator(`[data-message-id="${removed}"]`, { hasText: "message deleted" })
      .waitFor({ timeout: 5_000 });
  }, 60_000);

  it("reacts through a picker with search; each sees the other's reactions live", async () => {
    const room = await roomOfBoth("reactions");
    const id = await post(alice, room, "ship it");
    const a = await inRoom(alice, room);
    const b = await inRoom(bob, room);
    const onA = a.locator(`#messages [data-message-id="${id}"]`);
    const onB = b.locator(`#messages [data-message-id="${id}"]`);

    // bob opens the picker: focus in its search; "tada" then Enter takes 🎉.
    await onB.getByRole("button", { name: "Add reaction" }).click();
    const picker = b.getByRole("dialog", { name: "Pick a reaction" });
    await picker.waitFor();
    expect(await b.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe(
      "Search emoji",
    );
    expect(await accessibilityViolations(b)).toEqual([]);
    await picker.getByRole("searchbox", { name: "Search emoji" }).fill("tad");
    expect(await picker.getByRole("button").first().textContent()).toBe("🎉");
    await b.keyboard.press("Enter");
    await picker.waitFor({ state: "detached" });
    await onA.getByRole("button", { name: "🎉 1", exact: true }).waitFor({ timeout: 2_000 });
    await onB.getByRole("button", { name: "🎉 1, yours" }).waitFor();
    expect(await onB.locator('[data-emoji="🎉"]').getAttribute("aria-pressed")).toBe("true");

    // alice adds hers by clicking the same reaction; bob sees the count grow.
    await onA.getByRole("button", { name: "🎉 1", exact: true }).click();
    await onB.getByRole("button", { name: "🎉 2, yours" }).waitFor({ timeout: 2_000 });
    // bob takes his back: alice sees it go down, and his button is no longer pressed.
    await onB.getByRole("button", { name: "🎉 2, yours" }).click();
    await onA.getByRole("button", { name: "🎉 1, yours" }).waitFor({ timeout: 2_000 });
    await onB.getByRole("button", { name: "🎉 1", exact: true }).waitFor();

    // A reaction that comes while alice edits leaves her edit box as it is; it shows after.
    await onA.getByRole("button", { name: "Edit" }).click();
    await a.getByRole("textbox", { name: "Edit message" }).fill("ship it today");
    await t.app.inject({
      method: "PUT",
      url: `/api/rooms/${room}/messages/${id}/reactions/rocket`,
      headers: bob.headers,
    });
    await onB.getByRole("button", { name: "🚀 1, yours" }).waitFor({ timeout: 2_000 });
    expect(await a.getByRole("textbox", { name: "Edit message" }).inputValue()).toBe(
      "ship it today",
    );
    await a.getByRole("textbox", { name: "Edit message" }).press("Escape");
    await onA.getByRole("button", { name: "🚀 1", exact: true }).waitFor();

    // A search for a word of the description finds it too; Escape closes and gives focus back.
    await onA.getByRole("button", { name: "Add reaction" }).click();
    await a.getByRole("searchbox", { name: "Search emoji" }).fill("thumbs");
    expect(await a.getByRole("dialog").getByRole("button").allTextContents()).toContain("👍");
    // The arrow keys move from the box into the emoji and among them.
    await a.keyboard.press("ArrowDown");
    await a.keyboard.press("ArrowRight");
    expect(await a.evaluate(() => document.activeElement?.textContent)).toBe(
      await a.getByRole("dialog").getByRole("button").nth(1).textContent(),
    );
    await a.keyboard.press("Escape");
    await a.getByRole("dialog").waitFor({ state: "detached" });
    expect(await a.evaluate(() => document.activeElement?.textContent)).toBe("Add reaction");
    await a.screenshot({ path: `${SCREENSHOTS}reactions.png` });
  }, 60_000);
});
