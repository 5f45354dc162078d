/**
 * Signing in to the chat page in Debian's Chromium against the real server (SQLite): with a
 * password (a wrong one refused), the session cookie carrying requests and the live stream alike;
 * an admin's invitation link opens the join form, which signs the new person in; signing out ends
 * the session. axe finds no serious or critical problem on the sign-in and join forms.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessibilityViolations, startChatHarness, type ChatHarness } from "./chat-ui-harness.js";

const PASSWORD = "erin-password-1";

describe("signing in to the chat page in Chromium", { tags: ["chromium"] }, () => {
  let h: ChatHarness;

  beforeAll(async () => {
    h = await startChatHarness();
    const invite = await h.t.app.inject({
      method: "POST",
      url: "/api/admin/invites",
      headers: h.t.admin.headers,
      payload: { role: "admin", displayName: "Erin" },
    });
    const token = new URL(invite.json().url as string).hash.replace("#invite=", "");
    const accepted = await h.t.app.inject({
      method: "POST",
      url: "/api/auth/accept-invite",
      payload: { token, username: "erin", password: PASSWORD },
    });
    expect(accepted.statusCode, accepted.body).toBe(200);
  });

  afterAll(async () => {
    await h?.close();
    expect(h?.problems ?? []).toEqual([]);
  });

  async function signIn(page: Page, username: string, password: string): Promise<void> {
    await page.locator("#username").fill(username);
    await page.locator("#password").fill(password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
  }

  it("signs in with a password, lives on the session cookie, invites someone who joins, and signs out", async () => {
    const page = await h.openPage("erin");
    expect(await accessibilityViolations(page)).toEqual([]);
    await signIn(page, "erin", "not the password");
    await page.locator("#sign-in-error").filter({ hasText: /./ }).waitFor();
    await signIn(page, "erin", PASSWORD);
    await page.locator("#me").getByText("erin").waitFor();
    // The page holds no secret: the session is an HttpOnly cookie.
    expect(await page.evaluate(() => document.cookie)).not.toContain("parley_session");
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);

    // Requests (a room made) carry the cookie and the CSRF header; the stream runs on the cookie.
    await page.locator("#new-room").fill("ops");
    await page.locator("#new-room").press("Enter");
    await page.locator("#room h1", { hasText: "ops" }).waitFor();
    await page.locator("#present .person", { hasText: "erin" }).waitFor();
    await page.locator("#composer").fill("hello over the session");
    await page.locator("#composer").press("Enter");
    await page.locator("#messages .message", { hasText: "hello over the session" }).waitFor();

    // A reload keeps the session.
    await page.reload();
    await page.locator("#me").getByText("erin").waitFor();

    // An invitation: the link opens the join form in another browser, which signs frank in.
    await page.getByRole("button", { name: "Invite someone" }).click();
    await page.locator("#invite-name").fill("Frank");
    await page.getByRole("button", { name: "Create link" }).click();
    await page.locator("#invite-link").waitFor({ state: "visible" });
    const link = await page.locator("#invite-link").inputValue();
    expect(link).toContain("/app/#invite=");
    const other = await h.openPage("frank");
    await other.goto(link.replace(/^https?:\/\/[^/]+/, h.origin));
    await other.locator("#invite-username").fill("frank");
    await other.locator("#invite-password").fill("frank-password-1");
    expect(await accessibilityViolations(other)).toEqual([]);
    await other.getByRole("button", { name: "Join" }).click();
    await other.locator("#me").getByText("frank").waitFor();
    expect(new URL(other.url()).hash).toBe("");
    // The link is spent.
    const again = await h.t.app.inject({
      method: "POST",
      url: "/api/auth/accept-invite",
      payload: {
        token: new URL(link).hash.replace("#invite=", ""),
        username: "frank2",
        password: "frank-password-2",
      },
    });
    expect(again.statusCode).toBe(400);

    // Signing out ends the session: a reload shows the sign-in screen.
    await other.getByRole("button", { name: "Sign out" }).click();
    await other.locator("#username").waitFor();
    await other.reload();
    await other.locator("#username").waitFor();
  }, 90_000);
});
