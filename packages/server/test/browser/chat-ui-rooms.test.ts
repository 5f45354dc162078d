/**
 * Rooms on the chat page as they come and go, in Debian's Chromium against the real server
 * (SQLite): a DM someone opens with you shows at once, live, without a reload; a private room is
 * made from the page, found by no one else, and a member adds people to it, who get it at once;
 * search narrows to a room, a sender and a day. axe finds no serious or critical problem.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestUser } from "../helpers/build-app.js";
import {
  accessibilityViolations,
  horizontalOverflow,
  startChatHarness,
  type ChatHarness,
} from "./chat-ui-harness.js";

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
  async function api(user: TestUser, method: string, url: string, payload?: object) {
    const res = await h.t.app.inject({
      method: method as "GET",
      url,
      headers: user.headers,
      ...(payload ? { payload } : {}),
    });
    return { status: res.statusCode, body: res.body ? res.json() : undefined };
  }

  it("creates a private room that no one else finds, and adds a member, who gets it at once", async () => {
    const a = await h.signedIn(alice);
    const b = await h.signedIn(bob);
    const bobsReads = roomListReads(b);
    await a.locator("#new-room").fill("hideout");
    await a.getByLabel("Private").check();
    await a.locator("#new-room").press("Enter");
    await a.locator("#room h1", { hasText: "hideout" }).waitFor();
    await a.locator("#room .tag", { hasText: "Private" }).waitFor();
    const roomId = Number(
      await a.locator("#rooms .room-link.current").getAttribute("data-room-id"),
    );
    expect((await api(alice, "GET", `/api/rooms/${roomId}`)).body.visibility).toBe("private");
    // Not in the room browser, not readable by others.
    const browsed = await api(bob, "GET", "/api/rooms?scope=public&limit=200");
    expect(browsed.body.items.map((room: { id: number }) => room.id)).not.toContain(roomId);
    expect((await api(carol, "GET", `/api/rooms/${roomId}`)).status).toBe(404);
    // The box goes back to unchecked: the next room is public unless asked.
    expect(await a.getByLabel("Private").isChecked()).toBe(false);

    await a.getByRole("button", { name: "Add people" }).click();
    await a.locator("#add-people-search").fill("bo");
    await a.getByRole("button", { name: `Add ${bob.username}` }).click();
    await a.locator('#add-people [data-username="bob"] .added', { hasText: "Added" }).waitFor();
    await a.getByRole("status").filter({ hasText: "was added to hideout" }).waitFor();
    expect(await accessibilityViolations(a)).toEqual([]);
    expect((await api(bob, "GET", `/api/rooms/${roomId}`)).status).toBe(200);
    expect((await api(carol, "GET", `/api/rooms/${roomId}`)).status).toBe(404);

    // bob's page lists it at once (a room_added frame), and follows it.
    await b.locator(`#rooms [data-room-id="${roomId}"]`, { hasText: "hideout" }).waitFor({
      timeout: 5_000,
    });
    expect(bobsReads).toEqual([]);
    await a.getByRole("button", { name: "Back to hideout" }).click();
    await a.locator("#composer").fill("welcome to the hideout");
    await a.locator("#composer").press("Enter");
    await b.locator(`#rooms [data-room-id="${roomId}"] .unread`, { hasText: "1" }).waitFor();
    await b.locator(`[data-room-id="${roomId}"]`).click();
    await b.locator(".message", { hasText: "welcome to the hideout" }).waitFor();
    await b.locator("#room .tag", { hasText: "Private" }).waitFor();
  }, 60_000);

  it("searches within one room, by one sender, and before a day", async () => {
    const north = (await api(alice, "POST", "/api/rooms", { name: "north" })).body.id as number;
    const south = (await api(alice, "POST", "/api/rooms", { name: "south" })).body.id as number;
    for (const id of [north, south]) await api(bob, "POST", `/api/rooms/${id}/join`);
    for (const [user, id, content] of [
      [alice, north, "zephyr alpha"],
      [bob, north, "zephyr beta"],
      [alice, south, "zephyr gamma"],
    ] as const)
      expect((await api(user, "POST", `/api/rooms/${id}/messages`, { content })).status).toBe(201);

    const b = await h.signedIn(bob);
    await b.locator("#search").fill("zephyr");
    await b.locator("#search").press("Enter");
    const hits = b.locator("#search-results .search-hit");
    const found = async (count: number) => {
      await b
        .getByRole("status")
        .filter({ hasText: count === 0 ? "Nothing found." : `${count} message` })
        .waitFor();
      return (await hits.allTextContents()).map((text) => /zephyr (\w+)/.exec(text)?.[1]).sort();
    };
    expect(await found(3)).toEqual(["alpha", "beta", "gamma"]);

    await b.getByLabel("In").selectOption({ label: "north" });
    await b.getByRole("button", { name: "Search", exact: true }).click();
    expect(await found(2)).toEqual(["alpha", "beta"]);

    await b.getByLabel("From").fill("alice");
    await b.getByRole("button", { name: "Search", exact: true }).click();
    expect(await found(1)).toEqual(["alpha"]);

    await b.getByLabel("In").selectOption({ label: "All my rooms" });
    await b.getByRole("button", { name: "Search", exact: true }).click();
    expect(await found(2)).toEqual(["alpha", "gamma"]);
    expect(await accessibilityViolations(b)).toEqual([]);

    // Before today: nothing yet; before tomorrow: everything again.
    const day = (offset: number) =>
      b.evaluate((days) => {
        const date = new Date();
        date.setDate(date.getDate() + days);
        return date.toLocaleDateString("en-CA");
      }, offset);
    await b.getByLabel("From").fill("");
    await b.getByLabel("Before").fill(await day(0));
    await b.getByRole("button", { name: "Search", exact: true }).click();
    expect(await found(0)).toEqual([]);
    await b.getByLabel("Before").fill(await day(1));
    await b.getByLabel("Words").fill("zephyr gamma");
    await b.getByRole("button", { name: "Search", exact: true }).click();
    expect(await found(1)).toEqual(["gamma"]);

    // A hit still opens its room at the message; the filters fit a phone.
    await b.setViewportSize({ width: 360, height: 740 });
    expect(await horizontalOverflow(b)).toBe(0);
    await hits.first().click();
    await b.locator(".message.found", { hasText: "zephyr gamma" }).waitFor();
    expect(Number(await b.locator(".room-link.current").getAttribute("data-room-id"))).toBe(south);
  }, 60_000);
});
