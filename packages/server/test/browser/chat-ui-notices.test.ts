/**
 * The chat page at phone width, and what it tells its user: a quarantined message stays in its
 * sender's view marked "held for review" (after a reload too), a DLP refusal's error goes once a send succeeds, a DM or
 * a mention raises a browser notification while the page is hidden, and a muted room raises none.
 * Real server (SQLite), Debian's Chromium.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ModerationClassifier } from "../../src/safety/moderation/moderation-classifier.js";
import type { TestUser } from "../helpers/build-app.js";
import {
  accessibilityViolations,
  notificationsOf,
  SCREENSHOTS,
  setHidden,
  startChatHarness,
  type ChatHarness,
} from "./chat-ui-harness.js";

/** Quarantines what says QUARANTINE, passes the rest. */
const stubClassifier: ModerationClassifier = {
  name: "stub",
  async classify(text) {
    if (text.includes("QUARANTINE")) return { category: "harassment", score: 0.95 };
    return { category: "none", score: 0 };
  },
};

/** A test card number (Visa's documented test number), which the default DLP policy refuses. */
const TEST_CARD = "4111 1111 1111 1111";

describe(
  "chat page notices, notifications and phone width in Chromium",
  { tags: ["chromium"] },
  () => {
    let h: ChatHarness;
    let alice: TestUser;
    let bob: TestUser;

    beforeAll(async () => {
      h = await startChatHarness();
      h.t.ctx.safety.classifier = stubClassifier;
      alice = await h.t.user("user", "alice");
      bob = await h.t.user("user", "bob");
    });

    afterAll(async () => {
      await h?.close();
      expect(h?.problems ?? []).toEqual([]);
    });

    async function roomOfBoth(name: string): Promise<number> {
      const res = await h.t.app.inject({
        method: "POST",
        url: "/api/rooms",
        headers: alice.headers,
        payload: { name },
      });
      const id = res.json().id as number;
      await h.t.app.inject({ method: "POST", url: `/api/rooms/${id}/join`, headers: bob.headers });
      return id;
    }

    async function post(user: TestUser, room: number, content: string): Promise<number> {
      const res = await h.t.app.inject({
        method: "POST",
        url: `/api/rooms/${room}/messages`,
        headers: user.headers,
        payload: { content },
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as number;
    }

    it("fits a 360 px wide screen: no sideways scroll in the room list, a room, a thread or the emoji picker", async () => {
      const room = await roomOfBoth("a-room-with-a-rather-long-name-for-a-phone");
      const long = `see https://example.com/${"very-long-path-segment-".repeat(12)} and \`${"x".repeat(120)}\``;
      const id = await post(alice, room, long);
      await post(
        bob,
        room,
        "```\n" + "code line that is much wider than a phone ".repeat(4) + "\n```",
      );
      const page = await h.signedIn(alice, { viewport: { width: 360, height: 740 } });
      const width = () => page.evaluate(() => document.documentElement.scrollWidth);

      await page.locator(`[data-room-id="${room}"]`).click();
      await page.locator(`#messages [data-message-id="${id}"]`).waitFor();
      // The room takes the whole width; the list is one tap away.
      expect(await page.locator("nav.rooms").isVisible()).toBe(false);
      expect(await width()).toBeLessThanOrEqual(360);
      await page.screenshot({ path: `${SCREENSHOTS}phone-room.png` });

      await page.locator(`#messages [data-message-id="${id}"] [data-action="react"]`).click();
      await page.locator(".emoji-picker").waitFor();
      expect(await width()).toBeLessThanOrEqual(360);
      await page.keyboard.press("Escape");

      await page.locator(`#messages [data-message-id="${id}"] [data-action="thread"]`).click();
      await page.locator("#thread").waitFor();
      expect(await width()).toBeLessThanOrEqual(360);
      await page.screenshot({ path: `${SCREENSHOTS}phone-thread.png` });
      await page.locator("#thread").getByRole("button", { name: /close/i }).click();

      await page.getByRole("button", { name: "All rooms" }).click();
      await page.locator("nav.rooms").waitFor();
      expect(await page.locator("#room").isVisible()).toBe(false);
      expect(await width()).toBeLessThanOrEqual(360);
      await page.screenshot({ path: `${SCREENSHOTS}phone-rooms.png` });
      expect(await accessibilityViolations(page)).toEqual([]);
    }, 60_000);

    it("shows the sender a quarantined message as held for review, and others nothing until it is approved", async () => {
      const room = await roomOfBoth("moderated");
      const a = await h.signedIn(alice);
      const b = await h.signedIn(bob);
      for (const page of [a, b]) {
        await page.locator(`[data-room-id="${room}"]`).click();
        await page.locator(`[data-room-id="${room}"].current`).waitFor();
      }
      await a.locator("#composer").fill("QUARANTINE this please");
      await a.locator("#composer").press("Enter");
      const held = a.locator("#messages .message.held", { hasText: "QUARANTINE this please" });
      await held.getByText("Held for review").waitFor();
      await a.screenshot({ path: `${SCREENSHOTS}held-for-review.png` });
      await a.locator("#composer").fill("an ordinary line");
      await a.locator("#composer").press("Enter");
      await b.locator("#messages .message", { hasText: "an ordinary line" }).waitFor();
      expect(await b.locator("#messages .message", { hasText: "QUARANTINE" }).count()).toBe(0);

      // After a reload the sender still sees it, still marked; the other member still does not.
      for (const page of [a, b]) {
        await page.reload();
        await page.locator(`[data-room-id="${room}"]`).click();
        await page.locator("#messages .message", { hasText: "an ordinary line" }).waitFor();
      }
      await held.getByText("Held for review").waitFor();
      expect(await held.locator('[data-action="thread"], [data-action="react"]').count()).toBe(0);
      expect(await b.locator("#messages .message", { hasText: "QUARANTINE" }).count()).toBe(0);
      expect(await accessibilityViolations(a)).toEqual([]);

      // An admin approves it: bob sees it, alice's notice goes.
      const id = Number(await held.getAttribute("data-message-id"));
      const flags = await h.t.app.inject({
        method: "GET",
        url: "/api/admin/moderation/flags?limit=200",
        headers: h.t.admin.headers,
      });
      const flag = (flags.json().items as { id: number; messageId: number }[]).find(
        (candidate) => candidate.messageId === id,
      )!;
      const approved = await h.t.app.inject({
        method: "POST",
        url: `/api/admin/moderation/flags/${flag.id}/approve`,
        headers: h.t.admin.headers,
      });
      expect(approved.statusCode, approved.body).toBe(200);
      await b.locator("#messages .message", { hasText: "QUARANTINE this please" }).waitFor();
      await a.locator(`#messages [data-message-id="${id}"]:not(.held)`).waitFor();
      expect(await a.getByText("Held for review").count()).toBe(0);
    }, 60_000);

    it("clears a DLP refusal's error once the next message is sent", async () => {
      const room = await roomOfBoth("dlp");
      const a = await h.signedIn(alice);
      await a.locator(`[data-room-id="${room}"]`).click();
      await a.locator("#composer").fill(`my card is ${TEST_CARD}`);
      await a.locator("#composer").press("Enter");
      const error = a.locator("#flash[role=alert]");
      await error.waitFor();
      // The refused text is given back to edit.
      expect(await a.locator("#composer").inputValue()).toContain(TEST_CARD);
      await a.locator("#composer").fill("my card is in the vault");
      await a.locator("#composer").press("Enter");
      await a.locator("#messages .message", { hasText: "in the vault" }).waitFor();
      await error.waitFor({ state: "detached" });
    }, 60_000);

    it("notifies of DMs and mentions while the page is hidden, never of a muted room or while visible", async () => {
      const room = await roomOfBoth("notify");
      const dm = await h.t.app.inject({
        method: "POST",
        url: "/api/dms",
        headers: bob.headers,
        payload: { userId: alice.id },
      });
      const dmId = dm.json().id as number;
      const a = await h.signedIn(alice);
      await a.locator(`[data-room-id="${room}"]`).click();
      await a.locator("#present .person", { hasText: "alice" }).waitFor();
      const until = async (count: number) =>
        a.waitForFunction(
          (n) => (window as unknown as { __notifications: unknown[] }).__notifications.length >= n,
          count,
        );

      await post(bob, room, "@alice are you there? (seen, not notified)");
      await a.locator(".message", { hasText: "are you there" }).waitFor();
      await setHidden(a, true);
      await post(bob, room, "nothing for anyone");
      await post(bob, room, "@alice the build is red");
      await post(bob, dmId, "psst, a word in private");
      await until(2);
      // Mark the end of what arrived, then mute the room and mention again.
      await setHidden(a, false);
      await a.locator("#mute").click();
      expect(await a.locator("#mute").getAttribute("aria-pressed")).toBe("true");
      await a.locator(`[data-room-id="${room}"] .muted-mark`).waitFor();
      await setHidden(a, true);
      await post(bob, room, "@alice muted mention");
      await post(bob, dmId, "second private word");
      await a.locator(".message", { hasText: "muted mention" }).waitFor();
      await until(3);
      // Rooms are independent streams: the DM's frames may come before or after the room's.
      const seen = await notificationsOf(a);
      expect(seen.map((n) => `${n.title}: ${n.body}`).sort()).toEqual([
        "bob in notify: @alice the build is red",
        "bob: psst, a word in private",
        "bob: second private word",
      ]);
      // The mute is kept across a reload.
      await setHidden(a, false);
      await a.reload();
      await a.locator(`[data-room-id="${room}"] .muted-mark`).waitFor();
    }, 60_000);
  },
);
