/**
 * A team adopts the chat page, in Debian's Chromium against the real server (SQLite): two people
 * sign in with passwords, the admin invites a third who accepts in the browser; they find each
 * other and open a DM by name, share an image that shows as a preview, keep unread counts across a
 * reload (and across tabs as one reads), search, see each other typing and get a browser
 * notification; axe finds no serious or critical problem, and 360 px needs no sideways scroll.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  accessibilityViolations,
  notificationsOf,
  SCREENSHOTS,
  setHidden,
  startChatHarness,
  type ChatHarness,
} from "./chat-ui-harness.js";

/** A 2x2 red PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==",
  "base64",
);

const PASSWORDS = {
  alice: "alice-password-1",
  bob: "bob-password-22",
  carol: "carol-password-333",
};

describe("a team on the chat page in Chromium", { tags: ["chromium"] }, () => {
  let h: ChatHarness;
  let generalId: number;

  beforeAll(async () => {
    h = await startChatHarness();
    // alice (admin) and bob have passwords: each accepted an invitation made with the admin token.
    for (const [username, role] of [
      ["alice", "admin"],
      ["bob", "user"],
    ] as const) {
      const invite = await h.t.app.inject({
        method: "POST",
        url: "/api/admin/invites",
        headers: h.t.admin.headers,
        payload: { role, displayName: username === "alice" ? "Alice Admin" : "Bob Builder" },
      });
      expect(invite.statusCode, invite.body).toBe(201);
      const token = new URL(invite.json().url as string).hash.replace("#invite=", "");
      const accepted = await h.t.app.inject({
        method: "POST",
        url: "/api/auth/accept-invite",
        payload: { token, username, password: PASSWORDS[username] },
      });
      expect(accepted.statusCode, accepted.body).toBe(200);
    }
  });

  afterAll(async () => {
    await h?.close();
    expect(h?.problems ?? []).toEqual([]);
  });

  /** Signs in through the page's form with a username and password. */
  async function withPassword(page: Page, username: keyof typeof PASSWORDS): Promise<void> {
    await page.locator("#username").fill(username);
    await page.locator("#password").fill(PASSWORDS[username]);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.locator("#me").getByText(username).waitFor();
  }

  it("signs in, invites, finds people, shares an image, keeps unread counts, searches, types and notifies", async () => {
    // Two people sign in with passwords; a wrong one is refused with the server's words.
    const a = await h.openPage("alice");
    expect(await accessibilityViolations(a)).toEqual([]);
    await a.locator("#username").fill("alice");
    await a.locator("#password").fill("not her password");
    await a.getByRole("button", { name: "Sign in", exact: true }).click();
    await a.locator("#sign-in-error").filter({ hasText: /./ }).waitFor();
    await withPassword(a, "alice");
    const b = await h.openPage("bob");
    await withPassword(b, "bob");
    // The session is a cookie the page never reads.
    expect(await b.evaluate(() => document.cookie)).not.toContain("parley_session");

    // alice makes a room, bob finds it in the room browser and joins.
    await a.locator("#new-room").fill("general");
    await a.locator("#new-room").press("Enter");
    await a.locator("#room h1", { hasText: "general" }).waitFor();
    generalId = Number(await a.locator(".room-link.current").getAttribute("data-room-id"));
    await b.getByRole("button", { name: "Browse rooms" }).click();
    await b.getByRole("button", { name: "Join general" }).click();
    await b.locator("#room h1", { hasText: "general" }).waitFor();

    // alice invites carol, who accepts in her own browser and lands signed in.
    await a.getByRole("button", { name: "Invite someone" }).click();
    await a.locator("#invite-name").fill("Carol Coder");
    await a.getByRole("button", { name: "Create link" }).click();
    await a.locator("#invite-link").waitFor({ state: "visible" });
    const link = await a.locator("#invite-link").inputValue();
    expect(link).toContain("/app/#invite=");
    const c = await h.openPage("carol");
    await c.goto(link.replace(/^https?:\/\/[^/]+/, h.origin));
    await c.locator("#invite-username").fill("carol");
    await c.locator("#invite-password").fill(PASSWORDS.carol);
    expect(await accessibilityViolations(c)).toEqual([]);
    await c.getByRole("button", { name: "Join" }).click();
    await c.locator("#me").getByText("carol").waitFor();
    expect(new URL(c.url()).hash).toBe("");
    await c.getByRole("button", { name: "Browse rooms" }).click();
    await c.getByRole("button", { name: "Join general" }).click();
    await c.locator("#room h1", { hasText: "general" }).waitFor();

    // bob finds carol by the start of her name and opens a DM: it shows her name.
    await b.getByRole("button", { name: "Message someone" }).click();
    await b.locator("#people-search").fill("Car");
    await b.getByRole("button", { name: "Message Carol Coder" }).click();
    await b.locator("#room h1", { hasText: "Carol Coder" }).waitFor();
    const dmId = Number(await b.locator("#dms .room-link.current").getAttribute("data-room-id"));

    // An image in the DM: a preview on both sides.
    await b.locator("#composer-files").setInputFiles({
      name: "red.png",
      mimeType: "image/png",
      buffer: PNG,
    });
    await b.locator(".attachments li", { hasText: "red.png" }).waitFor();
    await b.locator("#composer").fill("the mock-up");
    await b.locator("#composer").press("Enter");
    const preview = (page: Page) =>
      page.locator(".message", { hasText: "the mock-up" }).locator("img.file-preview");
    await preview(b).waitFor();
    await b.waitForFunction(
      () =>
        (document.querySelector("img.file-preview") as HTMLImageElement | null)?.naturalWidth === 2,
    );
    await b.screenshot({ path: `${SCREENSHOTS}team-dm-image.png` });

    // carol learns of the DM (named after bob), opens it and sees the preview.
    await c.reload();
    await c.locator(`#dms [data-room-id="${dmId}"]`, { hasText: "Bob Builder" }).waitFor();
    await c.locator(`#dms [data-room-id="${dmId}"] .unread`, { hasText: "1" }).waitFor();
    await c.locator(`[data-room-id="${dmId}"]`).click();
    await preview(c).waitFor();
    await c.waitForFunction(
      () =>
        (document.querySelector("img.file-preview") as HTMLImageElement | null)?.naturalWidth === 2,
    );

    // Unread counts survive a reload: carol looks at general while bob writes in the DM.
    await c.locator(`[data-room-id="${generalId}"]`).click();
    await c.locator("#room h1", { hasText: "general" }).waitFor();
    await b.locator(`[data-room-id="${dmId}"]`).click();
    for (const text of ["first unread about the deploy", "second unread, @carol please look"]) {
      await b.locator("#composer").fill(text);
      await b.locator("#composer").press("Enter");
    }
    const badge = (page: Page) => page.locator(`[data-room-id="${dmId}"] .unread`);
    await badge(c).filter({ hasText: "2" }).waitFor();
    await c.reload();
    await badge(c).filter({ hasText: "2" }).waitFor();
    await c.locator(`[data-room-id="${dmId}"] .mentions`, { hasText: "@1" }).waitFor();
    // A second tab of carol's: reading in one clears the count in the other.
    const c2 = await c.context().newPage();
    await c2.goto(`${h.origin}/app/`);
    await badge(c2).filter({ hasText: "2" }).waitFor();
    await c.locator(`[data-room-id="${dmId}"]`).click();
    await c.locator(".message", { hasText: "second unread" }).waitFor();
    await badge(c2).waitFor({ state: "detached" });
    await c2.close();

    // Typing: bob's composing shows on carol's page, and goes when he sends.
    // Bob keeps typing as a person does (the page sends a typing frame at most every 2 s) until
    // carol's page shows it: her page may still be subscribing after its reload when he starts.
    await b.locator("#composer").pressSequentially("typing a reply", { delay: 20 });
    await expect
      .poll(
        async () => {
          if (await c.locator("#typing", { hasText: "bob is typing" }).isVisible()) return true;
          await b.locator("#composer").pressSequentially(".", { delay: 0 });
          return false;
        },
        { timeout: 20_000, interval: 250 },
      )
      .toBe(true);
    await b.locator("#composer").press("Enter");
    await c.locator(".message", { hasText: "typing a reply" }).waitFor();
    await c.locator("#typing", { hasText: "bob is typing" }).waitFor({ state: "detached" });

    // A notification while carol's page is hidden.
    await setHidden(c, true);
    await b.locator("#composer").fill("are you still there, carol?");
    await b.locator("#composer").press("Enter");
    await c.waitForFunction(
      () => (window as unknown as { __notifications: unknown[] }).__notifications.length > 0,
    );
    expect(await notificationsOf(c)).toEqual([
      { title: "Bob Builder", body: "are you still there, carol?" },
    ]);
    await setHidden(c, false);

    // Search: the hit's words marked; choosing it opens the DM at the message.
    await c.locator(`[data-room-id="${generalId}"]`).click();
    await c.locator("#search").fill("deploy");
    await c.locator("#search").press("Enter");
    const hit = c.locator("#search-results .search-hit").first();
    await hit.locator("mark", { hasText: /deploy/i }).waitFor();
    expect(await hit.textContent()).toContain("Bob Builder");
    expect(await accessibilityViolations(c)).toEqual([]);
    await c.screenshot({ path: `${SCREENSHOTS}team-search.png` });
    await hit.click();
    await c.locator(".message.found", { hasText: "first unread about the deploy" }).waitFor();

    // Everything above, checked by axe on a busy page, and at phone width.
    expect(await accessibilityViolations(b)).toEqual([]);
    await c.setViewportSize({ width: 360, height: 740 });
    expect(await c.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await c.screenshot({ path: `${SCREENSHOTS}team-phone.png` });

    // Signing out ends the session: a reload shows the sign-in screen.
    await b.getByRole("button", { name: "Sign out" }).click();
    await b.locator("#username").waitFor();
    await b.reload();
    await b.locator("#username").waitFor();
  }, 120_000);
});
