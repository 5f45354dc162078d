import { afterAll, beforeAll, expect, it } from "vitest";
import type { ModerationClassifier } from "../../../src/safety/moderation/moderation-classifier.js";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { EVENT_NAMES } from "../../../src/events/event-catalogue.js";
import { createRoom, insertEndpoint } from "../../helpers/fixtures.js";
import { countRows, failFanOutAfterWriting, joinRoom, post, recordEvents } from "./chat-helpers.js";

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Scores by marker word, so each test decides the outcome: 0.6 flags (band low), 0.95 quarantines. */
const stubClassifier: ModerationClassifier = {
  name: "stub",
  async classify(text) {
    if (text.includes("QUARANTINE")) return { category: "harassment", score: 0.95 };
    if (text.includes("FLAG")) return { category: "spam", score: 0.6 };
    return { category: "none", score: 0 };
  },
};

interface Flag {
  id: number;
  messageId: number;
  reviewStatus: string;
}

describeEachDialect("moderation review on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let bot: TestUser;
  let roomId: number;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    t.ctx.safety.classifier = stubClassifier;
    alice = await t.user("user", "alice");
    bob = await t.user("user", "bob");
    bot = await t.user("bot", "robot");
    roomId = (await createRoom(t, alice, "moderated")).id;
    await joinRoom(t, bob, roomId);
  });
  afterAll(async () => {
    await t.close();
  });

  const memberView = async (user: TestUser = bob) =>
    (
      await t.app.inject({
        method: "GET",
        url: `/api/rooms/${roomId}/messages?limit=200`,
        headers: user.headers,
      })
    ).json().items as Array<{
      id: number;
      moderationStatus: string;
    }>;
  const flagOf = async (messageId: number): Promise<Flag> => {
    const res = await t.app.inject({
      method: "GET",
      url: "/api/admin/moderation/flags?limit=200",
      headers: t.admin.headers,
    });
    return (res.json().items as Flag[]).find((flag) => flag.messageId === messageId)!;
  };
  const review = (flagId: number | string, verb: "approve" | "reject", who: TestUser = t.admin) =>
    t.app.inject({
      method: "POST",
      url: `/api/admin/moderation/flags/${flagId}/${verb}`,
      headers: who.headers,
    });

  it("keeps a flagged message visible, fires MESSAGE_CREATED then the FLAGGED event, without moderationQueueUrl", async () => {
    const seen = recordEvents(t);
    const res = await post(t, alice, roomId, "FLAG this");
    seen.stop();
    expect(res.statusCode).toBe(201);
    const message = res.json();
    expect(message.moderationStatus).toBe("FLAGGED");
    const flag = await flagOf(message.id);
    expect(seen.events).toEqual([
      [
        "MESSAGE_CREATED",
        {
          roomId,
          messageId: message.id,
          senderId: alice.id,
          timestamp: message.createdAt,
          threadId: null,
          mentions: [],
        },
      ],
      [
        "MESSAGE_AUTO_MODERATION_FLAGGED",
        {
          flaggedMessageId: flag.id,
          messageId: message.id,
          roomId,
          senderId: alice.id,
          category: "spam",
          score: 0.6,
          band: "low",
          status: "FLAGGED",
          occurredAt: expect.stringMatching(ISO),
        },
      ],
    ]);
    expect((await memberView()).map((m) => m.id)).toContain(message.id);
  });

  it("hides a quarantined message from members and bots until an admin approves it, then fires MESSAGE_CREATED once", async () => {
    const seen = recordEvents(t);
    const res = await post(t, alice, roomId, "QUARANTINE this");
    seen.stop();
    expect(res.statusCode).toBe(201);
    const message = res.json();
    expect(message.moderationStatus).toBe("QUARANTINED");
    expect(seen.events.map(([event]) => event)).toEqual(["MESSAGE_AUTO_MODERATION_QUARANTINED"]);
    expect(seen.events[0]![1]).toMatchObject({
      messageId: message.id,
      status: "QUARANTINED",
      band: "high",
      category: "harassment",
    });
    expect(seen.events[0]![1]).not.toHaveProperty("moderationQueueUrl");

    expect((await memberView()).map((m) => m.id)).not.toContain(message.id);
    expect((await memberView(t.admin)).map((m) => m.id)).toContain(message.id);
    const url = `/api/rooms/${roomId}/messages/${message.id}`;
    expect((await t.app.inject({ method: "GET", url, headers: bot.headers })).statusCode).toBe(404);
    expect((await t.app.inject({ method: "GET", url, headers: t.admin.headers })).statusCode).toBe(
      200,
    );

    const flag = await flagOf(message.id);
    expect(flag).toMatchObject({
      status: "QUARANTINED",
      reviewStatus: "pending",
      reviewedAt: null,
      reviewedBy: null,
      // The queue shows what is being judged, as plain text.
      messageText: "QUARANTINE this",
    });
    const approvedEvents = recordEvents(t);
    const approved = await review(flag.id, "approve");
    const twice = await review(flag.id, "approve");
    const rejectAfter = await review(flag.id, "reject");
    approvedEvents.stop();
    expect(approved.statusCode).toBe(200);
    expect(approved.json()).toEqual({
      id: flag.id,
      messageId: message.id,
      roomId,
      roomName: "moderated",
      authorId: alice.id,
      authorUsername: "alice",
      category: "harassment",
      score: 0.95,
      band: "high",
      status: "QUARANTINED",
      reviewStatus: "approved",
      createdAt: expect.stringMatching(ISO),
      reviewedAt: expect.stringMatching(ISO),
      reviewedBy: "admin",
      messageText: "QUARANTINE this",
    });
    expect(twice.statusCode).toBe(409);
    expect(twice.json().code).toBe("flag_already_reviewed");
    expect(rejectAfter.statusCode).toBe(409);
    expect(approvedEvents.events).toEqual([
      [
        "MESSAGE_CREATED",
        {
          roomId,
          messageId: message.id,
          senderId: alice.id,
          timestamp: message.createdAt,
          threadId: null,
          mentions: [],
        },
      ],
    ]);
    const visible = (await memberView()).find((m) => m.id === message.id);
    expect(visible?.moderationStatus).toBe("APPROVED");
    expect((await t.app.inject({ method: "GET", url, headers: bot.headers })).statusCode).toBe(200);
  });

  it("lists a quarantined message to its sender, marked, at both levels and in updatedSince, and to no other member or bot, until it is rejected", async () => {
    await joinRoom(t, bot, roomId);
    const before = new Date(Date.now() - 1_000).toISOString();
    const parent = (await post(t, bob, roomId, "a thread to answer in")).json();
    const held = (await post(t, alice, roomId, "QUARANTINE held at the top")).json();
    const heldReply = (
      await t.app.inject({
        method: "POST",
        url: `/api/rooms/${roomId}/messages`,
        headers: alice.headers,
        payload: { content: "QUARANTINE held in a thread", threadId: parent.id },
      })
    ).json();
    expect([held.moderationStatus, heldReply.moderationStatus]).toEqual([
      "QUARANTINED",
      "QUARANTINED",
    ]);
    const list = async (user: TestUser, query: string) => {
      const res = await t.app.inject({
        method: "GET",
        url: `/api/rooms/${roomId}/messages?limit=200${query}`,
        headers: user.headers,
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().items as Array<{ id: number; moderationStatus?: string; content?: string }>;
    };
    const views = {
      top: "",
      thread: `&threadId=${parent.id}`,
      changes: `&updatedSince=${encodeURIComponent(before)}`,
    };
    const ids = [held.id, heldReply.id];
    for (const [name, query] of Object.entries(views)) {
      const own = await list(alice, query);
      const wanted = name === "top" ? [held.id] : name === "thread" ? [heldReply.id] : ids;
      for (const id of wanted) {
        expect(
          own.find((m) => m.id === id),
          `${name} ${id}`,
        ).toMatchObject({
          moderationStatus: "QUARANTINED",
        });
      }
      for (const other of [bob, bot]) {
        const seen = (await list(other, query)).map((m) => m.id);
        expect(seen, `${other.username} ${name}`).not.toContain(held.id);
        expect(seen, `${other.username} ${name}`).not.toContain(heldReply.id);
      }
    }
    // Held for review is the author's alone: another member's held message is not in theirs.
    const bobsHeld = (await post(t, bob, roomId, "QUARANTINE bob's own")).json();
    expect((await list(alice, "")).map((m) => m.id)).not.toContain(bobsHeld.id);
    expect((await list(bob, "")).map((m) => m.id)).toContain(bobsHeld.id);
    // A rejected message is gone from its sender's view too.
    expect((await review((await flagOf(held.id)).id, "reject")).statusCode).toBe(200);
    expect((await list(alice, "")).map((m) => m.id)).not.toContain(held.id);
    expect((await list(alice, views.changes)).map((m) => m.id)).not.toContain(held.id);
    expect((await list(alice, views.thread)).map((m) => m.id)).toContain(heldReply.id);
  });

  it("approving a flagged message fires nothing more; rejecting one hides it from members", async () => {
    const kept = (await post(t, alice, roomId, "FLAG but fine")).json();
    const dropped = (await post(t, alice, roomId, "FLAG and not fine")).json();
    const seen = recordEvents(t);
    const approve = await review((await flagOf(kept.id)).id, "approve");
    const reject = await review((await flagOf(dropped.id)).id, "reject");
    seen.stop();
    expect(approve.statusCode).toBe(200);
    expect(reject.statusCode).toBe(200);
    expect(reject.json()).toMatchObject({ reviewStatus: "rejected", reviewedBy: "admin" });
    expect(seen.events).toEqual([]);
    const ids = (await memberView()).map((m) => m.id);
    expect(ids).toContain(kept.id);
    expect(ids).not.toContain(dropped.id);
    expect((await memberView(t.admin)).find((m) => m.id === dropped.id)?.moderationStatus).toBe(
      "REJECTED",
    );
  });

  it("shows each flag's message as plain text, cut to 500 characters", async () => {
    const marked = (await post(t, alice, roomId, "**FLAG** this  \n\n_spam_ <b>x</b>")).json();
    expect(((await flagOf(marked.id)) as Flag & { messageText: string }).messageText).toBe(
      "FLAG this spam <b>x</b>", // markdown has no raw HTML: it is text
    );
    const long = (await post(t, alice, roomId, `FLAG ${"é".repeat(800)}`)).json();
    const text = ((await flagOf(long.id)) as Flag & { messageText: string }).messageText;
    expect(Array.from(text)).toHaveLength(500);
    expect(text.endsWith("é…")).toBe(true);
    const one = await t.app.inject({
      method: "GET",
      url: `/api/admin/moderation/flags/${(await flagOf(long.id)).id}`,
      headers: t.admin.headers,
    });
    expect(one.json().messageText).toBe(text);
  });

  it("lists flags by review status, oldest first, in pages", async () => {
    for (const status of ["pending", "approved", "rejected"]) {
      const res = await t.app.inject({
        method: "GET",
        url: `/api/admin/moderation/flags?status=${status}`,
        headers: t.admin.headers,
      });
      expect(res.statusCode).toBe(200);
      const items = res.json().items as Flag[];
      expect(items.length).toBeGreaterThan(0);
      expect(items.every((flag) => flag.reviewStatus === status)).toBe(true);
    }
    const all: number[] = [];
    let cursor: string | null = null;
    do {
      const res = await t.app.inject({
        method: "GET",
        url: `/api/admin/moderation/flags?limit=1${cursor ? `&cursor=${cursor}` : ""}`,
        headers: t.admin.headers,
      });
      const page = res.json() as { items: Flag[]; nextCursor: string | null };
      all.push(...page.items.map((flag) => flag.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(all).toEqual([...all].sort((a, b) => a - b));
    expect(all.length).toBe(await countRows(t, "moderation_flags"));
  });

  it("answers 400 for a bad status or id, 404 for an unknown flag, 403 to non-admins and 401 without a token", async () => {
    const badStatus = await t.app.inject({
      method: "GET",
      url: "/api/admin/moderation/flags?status=open",
      headers: t.admin.headers,
    });
    expect(badStatus.statusCode).toBe(400);
    expect(badStatus.json().code).toBe("validation_failed");
    expect((await review("x", "approve")).statusCode).toBe(400);
    const unknown = await review(999999, "reject");
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe("not_found");
    for (const who of [alice, bot]) {
      const list = await t.app.inject({
        method: "GET",
        url: "/api/admin/moderation/flags",
        headers: who.headers,
      });
      expect(list.statusCode).toBe(403);
      expect((await review(1, "approve", who)).statusCode).toBe(403);
    }
    const anonymous = await t.app.inject({ method: "GET", url: "/api/admin/moderation/flags" });
    expect(anonymous.statusCode).toBe(401);
    expect(
      (await t.app.inject({ method: "POST", url: "/api/admin/moderation/flags/1/approve" }))
        .statusCode,
    ).toBe(401);
  });

  it("rolls back an approval whose MESSAGE_CREATED cannot be queued", async () => {
    await insertEndpoint(t, { events: EVENT_NAMES });
    const message = (await post(t, alice, roomId, "QUARANTINE again")).json();
    const flag = await flagOf(message.id);
    const deliveries = await countRows(t, "webhook_deliveries");
    const restore = failFanOutAfterWriting(t);
    const res = await review(flag.id, "approve");
    restore();
    expect(res.statusCode).toBe(500);
    expect(await countRows(t, "webhook_deliveries")).toBe(deliveries);
    expect((await flagOf(message.id)).reviewStatus).toBe("pending");
    expect((await memberView()).map((m) => m.id)).not.toContain(message.id);
  });

  it("flags a threat with the built-in local classifier", async () => {
    t.ctx.safety.classifier = (
      await import("../../../src/safety/moderation/local-classifier.js")
    ).createLocalClassifier();
    try {
      const res = await post(t, bob, roomId, "I will kill you");
      expect(res.json().moderationStatus).toBe("FLAGGED");
      expect(await flagOf(res.json().id)).toMatchObject({
        category: "violence",
        status: "FLAGGED",
      });
    } finally {
      t.ctx.safety.classifier = stubClassifier;
    }
  });
});

describeEachDialect("moderation events with a public base URL on $name", (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect, { publicBaseUrl: "https://chat.example.com" });
    t.ctx.safety.classifier = stubClassifier;
  });
  afterAll(async () => {
    await t.close();
  });

  it("links each moderation event to its flag in the review queue", async () => {
    const alice = await t.user("user", "alice");
    const room = await createRoom(t, alice, "linked");
    const seen = recordEvents(t);
    await post(t, alice, room.id, "FLAG me");
    await post(t, alice, room.id, "QUARANTINE me");
    seen.stop();
    const moderation = seen.events
      .filter(([event]) => event.startsWith("MESSAGE_AUTO_MODERATION_"))
      .map(([, data]) => data as { flaggedMessageId: number; moderationQueueUrl?: string });
    expect(moderation).toHaveLength(2);
    for (const data of moderation) {
      expect(data.moderationQueueUrl).toBe(
        `https://chat.example.com/admin/moderation/${data.flaggedMessageId}`,
      );
      const flag = await t.app.inject({
        method: "GET",
        url: `/api/admin/moderation/flags/${data.flaggedMessageId}`,
        headers: t.admin.headers,
      });
      expect(flag.statusCode, flag.body).toBe(200);
      expect(flag.json()).toMatchObject({ id: data.flaggedMessageId, reviewStatus: "pending" });
    }
    const missing = await t.app.inject({
      method: "GET",
      url: "/api/admin/moderation/flags/999999",
      headers: t.admin.headers,
    });
    expect(missing.statusCode).toBe(404);
  });
});
