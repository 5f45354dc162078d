/**
 * The admin UI for an operator's second day, in Chromium against a real server: times as people
 * say them (the exact local and UTC time on hover and focus), rooms by name, event groups, "Add
 * endpoint", the 7-day trend, the People, Tokens and Rooms pages, and moderation with the message
 * in its context and actions on its author. axe finds no serious or critical violation on any.
 */
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ModerationClassifier } from "../../src/safety/moderation/moderation-classifier.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";
import { startAdminHarness, type AdminHarness } from "./admin-ui-harness.js";

const SECRET = "a-receiver-secret-0123456789";

/** Scores by marker word: FLAG flags a message, QUARANTINE quarantines it. */
const classifier: ModerationClassifier = {
  name: "stub",
  async classify(text) {
    if (text.includes("QUARANTINE")) return { category: "harassment", score: 0.95 };
    if (text.includes("FLAG")) return { category: "spam", score: 0.6 };
    return { category: "none", score: 0 };
  },
};

describe("admin UI, the operator's second day, in Chromium", { tags: ["chromium"] }, () => {
  let ui: AdminHarness;
  let receiver: Receiver;

  beforeAll(async () => {
    [ui, receiver] = await Promise.all([startAdminHarness(), startReceiver()]);
    ui.t.ctx.safety.classifier = classifier;
  });
  afterAll(async () => {
    await receiver?.close();
    await ui?.close();
  });
  afterEach(async () => {
    await ui.endTest();
  });

  const noViolations = async (page: Page) => expect(await ui.violations(page)).toEqual([]);

  it("says times as people do, with the exact local and UTC time on hover and keyboard focus", async () => {
    const room = await ui.api<{ id: number; createdAt: string }>("POST", "/api/rooms", {
      name: "times",
    });
    await ui.api("POST", "/api/admin/inbound-webhooks", { roomId: room.id, displayName: "CI" });
    const page = await ui.open("/admin/inbound");
    const when = page.locator("#inbound-webhooks time.when").first();
    await when.waitFor();
    expect(await when.locator(".relative").textContent()).toMatch(/^(just now|\d+ seconds ago)$/);
    const iso = (await when.getAttribute("datetime"))!;
    const exact = (await when.getAttribute("data-exact"))!;
    // The browser's own zone (Chromium here: the machine's), then UTC.
    const utc = iso.replace("T", " ").replace(/\.\d+Z$/, " UTC");
    expect(exact.endsWith(` · ${utc}`)).toBe(true);
    const local = await page.evaluate(
      (at) =>
        new Intl.DateTimeFormat(undefined, {
          year: "numeric",
          month: "short",
          day: "numeric",
          hour: "2-digit",
          minute: "2-digit",
          second: "2-digit",
          timeZoneName: "short",
        }).format(new Date(at)),
      iso,
    );
    expect(exact.startsWith(local)).toBe(true);
    // Read out to screen readers with the time; shown on keyboard focus; Escape hides it.
    expect(await when.textContent()).toContain(exact);
    await page.keyboard.press("Tab");
    await when.focus();
    const tooltip = () =>
      page.evaluate(
        () =>
          getComputedStyle(document.activeElement!, "::after").content.replace(/^"|"$/g, "") ||
          "none",
      );
    expect(await tooltip()).toBe(exact);
    await page.keyboard.press("Escape");
    expect(await page.evaluate(() => document.activeElement?.tagName)).not.toBe("TIME");
    await when.hover();
    expect(
      await when.evaluate((e) => getComputedStyle(e, "::after").content.replace(/^"|"$/g, "")),
    ).toBe(exact);
    await noViolations(page);
    await ui.screenshot(page, "operator-times");
  });

  it("adds an endpoint from a button, rooms chosen by name and a group of events, then shows its 7-day trend", async () => {
    await ui.api("POST", "/api/rooms", { name: "alerts" });
    await ui.api("POST", "/api/admin/webhooks", {
      name: "Existing",
      url: receiver.url,
      secret: SECRET,
      events: ["ROOM_CREATED"],
    });
    const page = await ui.open("/admin/webhooks");
    await page.locator("#webhooks").waitFor();
    // With endpoints listed, the form waits behind "Add endpoint".
    expect(await page.locator("#webhook-form").count()).toBe(0);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await page.locator("#webhook-name").fill("Alerts sink");
    await page.locator("#webhook-url").fill(receiver.url);
    await page.getByRole("button", { name: "Generate" }).click();
    await page.locator("#webhook-event-MESSAGE_all").check();
    // A group covers its events: their own boxes no longer apply.
    expect(await page.locator("#webhook-event-MESSAGE_CREATED").isDisabled()).toBe(true);
    expect(await page.locator("#webhook-event-ROOM_CREATED").isDisabled()).toBe(false);
    await page.locator("#webhook-room-add").fill("alerts");
    await page.locator("#webhook-room-add").press("Enter");
    await expect
      .poll(() => page.locator("#webhook-rooms-chosen").textContent())
      .toContain("alerts");
    await noViolations(page);
    await ui.screenshot(page, "operator-add-endpoint");
    await page.getByRole("button", { name: "Create webhook" }).click();
    await page.locator("#webhook-secret-value").waitFor();
    const { items } = await ui.api<{
      items: { id: number; name: string; events: string[]; roomIds: number[] | null }[];
    }>("GET", "/api/admin/webhooks");
    const created = items.find((w) => w.name === "Alerts sink")!;
    const rooms = await ui.api<{ items: { id: number; name: string }[] }>(
      "GET",
      "/api/admin/rooms?query=alerts",
    );
    expect(created).toMatchObject({ events: ["MESSAGE_*"], roomIds: [rooms.items[0]!.id] });
    // Cancel closes the form again.
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await page.getByRole("button", { name: "Cancel" }).click();
    expect(await page.locator("#webhook-form").count()).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("add-endpoint");

    // The trend: seven bars, the last one the test delivery that just succeeded.
    const existing = items.find((w) => w.name === "Existing")!;
    await ui.api("POST", `/api/admin/webhooks/${existing.id}/test`);
    await expect.poll(() => receiver.requests.length, { interval: 100, timeout: 10_000 }).toBe(1);
    await page.reload();
    const trend = page.locator(`tr[data-webhook-id="${existing.id}"] .trend[role="img"]`);
    await trend.waitFor();
    expect(await trend.locator(".bar").count()).toBe(7);
    expect(await trend.locator(".bar").last().getAttribute("data-rate")).toBe("1.000");
    const label = (await trend.getAttribute("aria-label"))!;
    expect(label).toContain("Existing");
    expect(label).toContain("last 24 hours: 100.0% of 1");
    expect(label).toContain("6 days before: no attempts");
    await noViolations(page);
    await ui.screenshot(page, "operator-trend");

    // Delete says the delivery history goes too.
    const row = page.locator(`tr[data-webhook-id="${existing.id}"]`);
    await row.getByRole("button", { name: "Delete" }).click();
    expect(await page.locator(".confirm-row .question").textContent()).toMatch(
      /delivery history\? Its delivery log .* deleted with it/,
    );
    await noViolations(page);
  });

  it("shows inbound webhooks and moderation flags with room names, and creates an inbound webhook by room name", async () => {
    await ui.api("POST", "/api/rooms", { name: "builds" });
    const page = await ui.open("/admin/inbound");
    await page
      .locator("#inbound-room option", { hasText: "builds" })
      .waitFor({ state: "attached" });
    await page.locator("#inbound-room").selectOption({ label: "builds" });
    await page.locator("#inbound-name").fill("Builder");
    await page.getByRole("button", { name: "Create inbound webhook" }).click();
    await page.locator("#token-reveal").waitFor();
    const row = page.locator("#inbound-webhooks tr", { hasText: "Builder" });
    expect(await row.locator("td").nth(1).textContent()).toBe("builds");
    await noViolations(page);
  });

  it("reviews a flag in its conversation, with the author's other flags, acts on the author, and weighs Approve and Reject alike", async () => {
    const { t } = ui;
    const mallory = await t.user("user", "mallory");
    const room = await ui.api<{ id: number }>("POST", "/api/rooms", { name: "support" });
    await ui.api("POST", `/api/rooms/${room.id}/members`, { userId: mallory.id });
    const say = (who: { headers: { authorization: string } }, content: string) =>
      t.app.inject({
        method: "POST",
        url: `/api/rooms/${room.id}/messages`,
        headers: who.headers,
        payload: { content },
      });
    await say(t.admin, "how do I reset the printer?");
    await say(mallory, "FLAG earlier rant");
    await say(t.admin, "please keep it civil");
    await say(mallory, "FLAG you are all useless");
    await say(t.admin, "noted, escalating");
    const flags = await ui.api<{ items: { id: number; messageText: string }[] }>(
      "GET",
      "/api/admin/moderation/flags",
    );
    const flag = flags.items.find((f) => f.messageText === "FLAG you are all useless")!;

    const page = await ui.open("/admin/moderation");
    const row = page.locator(`tr[data-flag-id="${flag.id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain("in #support by @mallory");
    const approve = row.getByRole("button", { name: "Approve" });
    const reject = row.getByRole("button", { name: "Reject" });
    expect(await approve.getAttribute("class")).toBe(await reject.getAttribute("class"));
    const [a, r] = await Promise.all([approve.boundingBox(), reject.boundingBox()]);
    expect(Math.abs(a!.width - r!.width)).toBeLessThan(1);
    expect(await approve.evaluate((e) => getComputedStyle(e).backgroundColor)).toBe(
      await reject.evaluate((e) => getComputedStyle(e).backgroundColor),
    );
    await noViolations(page);

    await row.getByRole("link", { name: `#${flag.id}` }).click();
    const conversation = page.locator("#message-context .conversation li");
    await conversation.first().waitFor();
    expect(await conversation.allTextContents()).toEqual([
      expect.stringContaining("how do I reset the printer?"),
      expect.stringContaining("FLAG earlier rant"),
      expect.stringContaining("please keep it civil"),
      expect.stringContaining("the flagged message"),
      expect.stringContaining("noted, escalating"),
    ]);
    await page.locator("#author-flags").waitFor();
    expect(await page.locator("#author-flags tbody tr").count()).toBe(1);
    expect(await page.locator("#author-flags").textContent()).toContain("earlier rant");
    await noViolations(page);
    await ui.screenshot(page, "operator-flag-context");

    await page.getByRole("button", { name: "Revoke their tokens" }).click();
    await page.getByRole("button", { name: "Confirm: revoke their tokens" }).click();
    await page.locator("#flash").getByText("Every token of @mallory is revoked").waitFor();
    const me = () => t.app.inject({ method: "GET", url: "/api/me", headers: mallory.headers });
    expect((await me()).statusCode).toBe(401);
    await page.getByRole("button", { name: "Disable user" }).click();
    await page.getByRole("button", { name: "Confirm: disable user" }).click();
    await page.locator("#flash").getByText("@mallory is disabled").waitFor();
    const users = await ui.api<{ items: { id: number; status: string }[] }>(
      "GET",
      "/api/admin/users?limit=200",
    );
    expect(users.items.find((u) => u.id === mallory.id)!.status).toBe("disabled");
  });

  it("manages people: role, disable and enable, and a sign-in reset the person completes on the chat page", async () => {
    const { t } = ui;
    const page = await ui.open("/admin/users");
    await page.locator("#person-username").fill("grace");
    await page.locator("#person-name").fill("Grace Hopper");
    await page.getByRole("button", { name: "Add person" }).click();
    const link = page.locator("#sign-in-link-value");
    await link.waitFor();
    expect(await link.inputValue()).toMatch(/\/app\/#reset=[A-Za-z0-9_-]{43}$/);
    await noViolations(page);
    await ui.screenshot(page, "operator-people");

    // The person opens the link, chooses a password and is signed in.
    const chat = await ui.openAnonymous(
      new URL(await link.inputValue()).pathname + new URL(await link.inputValue()).hash,
    );
    await chat.locator("#reset-password").fill("grace's own passphrase");
    await chat.getByRole("button", { name: "Set password and sign in" }).click();
    await expect
      .poll(() => chat.evaluate(() => location.hash), { interval: 100, timeout: 20_000 })
      .toBe("");
    await noViolations(chat);
    const login = await t.app.inject({
      method: "POST",
      url: "/api/auth/login",
      payload: { username: "grace", password: "grace's own passphrase" },
    });
    expect(login.statusCode).toBe(200);

    // Filter by name, kept in the address; change the role; disable, then enable.
    await page.locator("#people-filter").fill("gra");
    await expect.poll(() => new URL(page.url()).search).toBe("?query=gra");
    const grace = page.locator("#people tbody tr", { hasText: "@grace" });
    expect(await page.locator("#people tbody tr").count()).toBe(1);
    await grace.getByRole("combobox", { name: "Role of @grace" }).selectOption("admin");
    await page.locator("#flash").getByText("@grace is now admin").waitFor();
    await grace.getByRole("button", { name: "Disable" }).click();
    await page.getByRole("button", { name: "Confirm: disable" }).click();
    await page.locator("#flash").getByText("@grace is disabled").waitFor();
    await page
      .locator("#people tbody tr", { hasText: "@grace" })
      .getByRole("button", { name: "Enable" })
      .click();
    await page.locator("#flash").getByText("@grace is enabled again").waitFor();
    const users = await ui.api<{ items: { username: string; role: string; status: string }[] }>(
      "GET",
      "/api/admin/users?limit=200",
    );
    expect(users.items.find((u) => u.username === "grace")).toMatchObject({
      role: "admin",
      status: "active",
    });
    // A reset ends the password at once and hands a new link.
    await page
      .locator("#people tbody tr", { hasText: "@grace" })
      .getByRole("button", { name: "Reset sign-in" })
      .click();
    await page.getByRole("button", { name: "Confirm: reset sign-in" }).click();
    await page.locator("#sign-in-link-value").waitFor();
    const again = await t.app.inject({
      method: "POST",
      url: "/api/auth/login",
      payload: { username: "grace", password: "grace's own passphrase" },
    });
    expect(again.statusCode).toBe(401);
    await noViolations(page);
  });

  it("finds tokens by the start of their id and revokes one; lists rooms, private ones too, and deletes one", async () => {
    const { t } = ui;
    const bot = await t.user("bot", "deploy-bot");
    const issued = await ui.api<{ token: string; tokenId: string }>(
      "POST",
      `/api/admin/users/${bot.id}/tokens`,
    );
    const page = await ui.open("/admin/tokens");
    await page.locator("#tokens tbody tr").first().waitFor();
    await page.locator("#token-prefix").fill(issued.tokenId.slice(0, 10));
    await page.getByRole("button", { name: "Find" }).click();
    await expect.poll(() => page.locator("#tokens tbody tr").count()).toBe(1);
    expect(new URL(page.url()).searchParams.get("prefix")).toBe(issued.tokenId.slice(0, 10));
    const row = page.locator(`tr[data-token-id="${issued.tokenId}"]`);
    expect(await row.textContent()).toContain("@deploy-bot");
    expect(await page.content()).not.toContain(issued.token);
    await noViolations(page);
    await ui.screenshot(page, "operator-tokens");
    await row.getByRole("button", { name: "Revoke" }).click();
    await page.getByRole("button", { name: "Confirm: revoke" }).click();
    await page.locator("#flash").getByText("is revoked").waitFor();
    const me = await t.app.inject({
      method: "GET",
      url: "/api/me",
      headers: { authorization: `Bearer ${issued.token}` },
    });
    expect(me.statusCode).toBe(401);

    await t.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: bot.headers,
      payload: { name: "war-room", visibility: "private" },
    });
    await page.getByRole("link", { name: "Rooms" }).click();
    const warRoom = page.locator("#rooms tbody tr", { hasText: "war-room" });
    await warRoom.waitFor();
    expect(await warRoom.textContent()).toContain("private");
    await noViolations(page);
    await ui.screenshot(page, "operator-rooms");
    await warRoom.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("button", { name: "Confirm: delete" }).click();
    await page.locator("#flash").getByText("“war-room” was deleted").waitFor();
    expect(await page.locator("#rooms tbody tr", { hasText: "war-room" }).count()).toBe(0);
  });

  it("fits the new pages on a 360 px phone", async () => {
    for (const path of ["/admin/users", "/admin/tokens", "/admin/rooms"]) {
      const page = await ui.open(path, { width: 360, height: 800 });
      await page.locator("h1").waitFor();
      await page.locator("table, .empty").first().waitFor();
      expect(
        await page.evaluate(
          () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
        ),
        path,
      ).toBe(0);
      await noViolations(page);
    }
  });
});
