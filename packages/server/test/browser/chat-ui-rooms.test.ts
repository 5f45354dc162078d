/**
 * Rooms on the chat page as they come and go, in Debian's Chromium against the real server
 * (SQLite): a DM someone opens with you shows at once, live, without a reload.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestUser } from "../helpers/build-app.js";
import { accessibilityViolations, startChatHarness, type ChatHarness } from "./chat-ui-harness.js";

describe("rooms on the chat page in Chromium", { tags: ["chromium"] }, () => {
  let h: ChatHarness;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;

  beforeAll(async () => {
    h = await startChatHarness();
    alice = await h.t.user("user", "alice");
    bob = await h.t.user("user", "bob");
    carol = await h.t.user("user", "carol");
  });

  afterAll(async () => {
    await h?.close();
    expect(h?.problems ?? []).toEqual([]);
  });

  /** Records the page's requests for the whole room list (the 15 s fallback reads it). */
  function roomListReads(page: Page): string[] {
    const reads: string[] = [];
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (url.pathname === "/api/rooms" && request.method() === "GET") reads.push(url.search);
    });
    return reads;
  }

  it("shows a DM someone opens with you at once, without a reload, and follows it live", async () => {
    const a = await h.signedIn(alice);
    const b = await h.signedIn(bob);
    const c = await h.signedIn(carol);
    const bobsReads = roomListReads(b);

    await a.getByRole("button", { name: "Message someone" }).click();
    await a.locator("#people-search").fill("bob");
    await a.getByRole("button", { name: `Message ${bob.username}` }).click();
    await a.locator("#room h1", { hasText: bob.username }).waitFor();
    const dmId = Number(await a.locator("#dms .room-link.current").getAttribute("data-room-id"));

    // bob's page lists it, named after alice, well before its 15 s fallback would.
    const dm = b.locator(`#dms [data-room-id="${dmId}"]`, { hasText: alice.username });
    await dm.waitFor({ timeout: 5_000 });
    // It was the frame, not a reading of the room list, that brought it.
    expect(bobsReads).toEqual([]);

    // And it is followed: alice's message counts as unread there, then shows when bob opens it.
    await a.locator("#composer").fill("a word in private");
    await a.locator("#composer").press("Enter");
    await b.locator(`#dms [data-room-id="${dmId}"] .unread`, { hasText: "1" }).waitFor();
    await dm.click();
    await b.locator(".message", { hasText: "a word in private" }).waitFor();
    expect(await accessibilityViolations(b)).toEqual([]);

    // Nobody else hears of it.
    await c.locator("#me").waitFor();
    expect(await c.locator(`[data-room-id="${dmId}"]`).count()).toBe(0);
  }, 60_000);
});
