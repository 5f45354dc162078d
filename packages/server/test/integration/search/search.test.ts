import { afterAll, beforeAll, expect, it } from "vitest";
import type { ModerationClassifier } from "../../../src/safety/moderation/moderation-classifier.js";
import { CANDIDATES } from "../../../src/search/search-repository.js";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { createRoom, postMessages } from "../../helpers/fixtures.js";
import { joinRoom, post } from "../chat/chat-helpers.js";

/** Quarantines content with the marker word, lets anything else through. */
const stubClassifier: ModerationClassifier = {
  name: "stub",
  async classify(text) {
    if (text.includes("QUARANTINE")) return { category: "harassment", score: 0.95 };
    return { category: "none", score: 0 };
  },
};

interface Hit {
  roomId: number;
  messageId: number;
  threadId: number | null;
  createdAt: string;
  snippet: string;
}

describeEachDialect("search on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let roomId: number;
  let otherRoomId: number;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    t.ctx.safety.classifier = stubClassifier;
    alice = await t.user("user", "alice");
    bob = await t.user("user", "bob");
    carol = await t.user("user", "carol");
    roomId = (await createRoom(t, alice, "search")).id;
    await joinRoom(t, bob, roomId);
    otherRoomId = (await createRoom(t, carol, "elsewhere")).id;
  });
  afterAll(async () => {
    await t.close();
  });

  const search = (user: TestUser, query: Record<string, string | number>) =>
    t.app.inject({
      method: "GET",
      url: `/api/search?${new URLSearchParams(
        Object.entries(query).map(([k, v]) => [k, String(v)]),
      ).toString()}`,
      headers: user.headers,
    });
  const hits = async (user: TestUser, query: Record<string, string | number>) => {
    const res = await search(user, query);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().items as Hit[];
  };
  const posted = async (user: TestUser, content: string, room = roomId, format?: string) => {
    const res = await post(t, user, room, content, format);
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: number; createdAt: string; moderationStatus: string };
  };
  const word = () => `w${Math.random().toString(36).slice(2, 10)}`;

  it("finds a message by a word of the text a reader sees, with the match marked in its snippet", async () => {
    const w = word();
    const message = await posted(
      alice,
      `We **${w}** on Friday, see [the plan](https://example.com/plan)`,
    );
    expect(await hits(bob, { q: w })).toEqual([
      {
        roomId,
        messageId: message.id,
        threadId: null,
        createdAt: message.createdAt,
        snippet: `We <mark>${w}</mark> on Friday, see the plan (https://example.com/plan)`,
      },
    ]);
    // Markdown is not text: the asterisks and the link's brackets are no part of a word.
    expect(await hits(bob, { q: `${w} friday` })).toHaveLength(1);
    expect(await hits(bob, { q: `${w} monday` })).toEqual([]);
  });

  it("finds a word inside an address, a host name or a hyphenated word", async () => {
    const w = word();
    await posted(alice, `mail ${w}@corp.example or visit ${w}-docs.example.org/start`);
    expect(await hits(alice, { q: `corp ${w}` })).toHaveLength(1);
    expect(await hits(alice, { q: "docs start" })).toHaveLength(1);
  });

  it("matches a word with a trailing * as a prefix, and case does not matter", async () => {
    const w = word();
    await posted(alice, `${w.toUpperCase()}ING is done`);
    expect(await hits(alice, { q: w })).toEqual([]);
    expect(await hits(alice, { q: `${w}*` })).toHaveLength(1);
    expect(await hits(alice, { q: `${w.toUpperCase()}ing` })).toHaveLength(1);
  });

  it("escapes the text of a snippet, so only the marks are markup", async () => {
    const w = word();
    await posted(
      alice,
      `<p>a &lt;script&gt;alert(1)&lt;/script&gt; &amp; "${w}"</p>`,
      roomId,
      "html",
    );
    const [hit] = await hits(alice, { q: w });
    expect(hit!.snippet).toBe(
      `a &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;<mark>${w}</mark>&quot;`,
    );
  });

  it("cuts a long text around its first match", async () => {
    const w = word();
    await posted(alice, `${"lorem ipsum ".repeat(40)}${w} ${"dolor sit ".repeat(40)}`);
    const [hit] = await hits(alice, { q: w });
    expect(hit!.snippet).toMatch(
      new RegExp(`^…(lorem ipsum ){4}.*<mark>${w}</mark> dolor sit .*…$`),
    );
    expect(hit!.snippet.replace(/<\/?mark>/g, "").length).toBeLessThanOrEqual(202);
  });

  it("answers newest first, a page at a time, through the cursor", async () => {
    const w = word();
    const ids = await postMessages(t, alice, roomId, 7, `page ${w}`);
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const res = await search(alice, { q: w, limit: 3, ...(cursor ? { cursor } : {}) });
      expect(res.statusCode).toBe(200);
      const page = res.json() as { items: Hit[]; nextCursor: string | null };
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items.map((hit) => hit.messageId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
  });

  it("finds only messages of the rooms and DMs the user is a member of, admins included", async () => {
    const w = word();
    const inRoom = await posted(alice, `shared ${w}`);
    const elsewhere = await posted(carol, `private ${w}`, otherRoomId);
    const dm = await t.app.inject({
      method: "POST",
      url: "/api/dms",
      headers: alice.headers,
      payload: { userId: carol.id },
    });
    expect(dm.statusCode).toBe(201);
    const dmId = dm.json().id as number;
    const inDm = await posted(carol, `between us ${w}`, dmId);

    expect((await hits(alice, { q: w })).map((h) => h.messageId)).toEqual([inDm.id, inRoom.id]);
    expect((await hits(bob, { q: w })).map((h) => h.messageId)).toEqual([inRoom.id]);
    expect((await hits(carol, { q: w })).map((h) => h.messageId)).toEqual([inDm.id, elsewhere.id]);
    // The admin is in none of these rooms: an admin reads no one else's room or DM by searching.
    expect(await hits(t.admin, { q: w })).toEqual([]);
  });

  it("no longer finds a room's messages once the user has left it", async () => {
    const w = word();
    const leaving = (await createRoom(t, alice, "leaving")).id;
    await joinRoom(t, bob, leaving);
    await posted(alice, `before leaving ${w}`, leaving);
    expect(await hits(bob, { q: w })).toHaveLength(1);
    const left = await t.app.inject({
      method: "POST",
      url: `/api/rooms/${leaving}/leave`,
      headers: bob.headers,
    });
    expect(left.statusCode, left.body).toBeLessThan(300);
    expect(await hits(bob, { q: w })).toEqual([]);
  });

  it("narrows to one room, to one sender and to before a time", async () => {
    const w = word();
    const first = await posted(alice, `narrow ${w}`);
    const second = await posted(bob, `narrow ${w}`);
    await posted(carol, `narrow ${w}`, otherRoomId);
    expect((await hits(alice, { q: w, roomId })).map((h) => h.messageId)).toEqual([
      second.id,
      first.id,
    ]);
    expect((await hits(alice, { q: w, from: "bob" })).map((h) => h.messageId)).toEqual([second.id]);
    expect((await hits(alice, { q: w, from: "@alice" })).map((h) => h.messageId)).toEqual([
      first.id,
    ]);
    expect(await hits(alice, { q: w, from: "nobody-by-that-name" })).toEqual([]);
    const before = new Date(Date.parse(second.createdAt)).toISOString();
    const earlier = await hits(alice, { q: w, before });
    expect(earlier.map((h) => h.messageId)).not.toContain(second.id);
    expect(earlier.every((h) => Date.parse(h.createdAt) < Date.parse(before))).toBe(true);
    expect(
      (await hits(alice, { q: w, before: new Date(Date.now() + 60_000).toISOString() })).length,
    ).toBe(2);
  });

  it("finds a user's older message under thousands of newer matches in rooms they are not in", async () => {
    const w = word();
    const mine = await posted(alice, `ours ${w}`);
    // More newer matches elsewhere than the index's first reading takes (CANDIDATES), written
    // as rows: the index is kept by the database, whatever wrote them.
    const now = Date.now();
    const rows = Array.from({ length: CANDIDATES + 100 }, (_, i) => ({
      room_id: otherRoomId,
      sender_user_id: carol.id,
      inbound_webhook_id: null,
      sender_display_name: "carol",
      sender_avatar_url: null,
      content: `theirs ${w}`,
      content_format: "markdown" as const,
      content_text: `theirs ${w}`,
      moderation_status: "none" as const,
      created_at: now + i,
      updated_at: now + i,
    }));
    for (let i = 0; i < rows.length; i += 500)
      await t.ctx.db
        .insertInto("messages")
        .values(rows.slice(i, i + 500))
        .execute();
    expect((await hits(alice, { q: w })).map((h) => h.messageId)).toEqual([mine.id]);
    expect(await hits(carol, { q: w, limit: 5 })).toHaveLength(5);
  });

  it("refuses roomId of a room the user is not in (403) or that does not exist (404)", async () => {
    const notIn = await search(alice, { q: "narrow", roomId: otherRoomId });
    expect(notIn.statusCode).toBe(403);
    expect(notIn.json().code).toBe("not_a_member");
    const adminNotIn = await search(t.admin, { q: "narrow", roomId });
    expect(adminNotIn.statusCode).toBe(403);
    const missing = await search(alice, { q: "narrow", roomId: 999999 });
    expect(missing.statusCode).toBe(404);
  });

  it("finds the new words of an edited message at once, and no longer its old ones", async () => {
    const before = word();
    const after = word();
    const message = await posted(alice, `draft ${before}`);
    const edit = await t.app.inject({
      method: "PATCH",
      url: `/api/rooms/${roomId}/messages/${message.id}`,
      headers: alice.headers,
      payload: { content: `final ${after}` },
    });
    expect(edit.statusCode).toBe(200);
    expect(await hits(bob, { q: before })).toEqual([]);
    expect((await hits(bob, { q: after })).map((h) => h.snippet)).toEqual([
      `final <mark>${after}</mark>`,
    ]);
  });

  it("never finds a deleted message", async () => {
    const w = word();
    const message = await posted(alice, `gone ${w}`);
    expect(await hits(bob, { q: w })).toHaveLength(1);
    const res = await t.app.inject({
      method: "DELETE",
      url: `/api/rooms/${roomId}/messages/${message.id}`,
      headers: alice.headers,
    });
    expect(res.statusCode).toBe(204);
    expect(await hits(bob, { q: w })).toEqual([]);
    expect(await hits(alice, { q: w })).toEqual([]);
  });

  it("never finds a quarantined or rejected message; an approved one is found from then on", async () => {
    const w = word();
    const held = await posted(alice, `QUARANTINE ${w} held`);
    const rejected = await posted(alice, `QUARANTINE ${w} rejected`);
    expect(held.moderationStatus).toBe("QUARANTINED");
    // Not by its members, not by its author, not by an admin member.
    await joinRoom(t, t.admin, roomId);
    for (const user of [alice, bob, t.admin]) expect(await hits(user, { q: w })).toEqual([]);
    const flags = await t.app.inject({
      method: "GET",
      url: "/api/admin/moderation/flags?limit=200",
      headers: t.admin.headers,
    });
    const flagOf = (messageId: number) =>
      (flags.json().items as Array<{ id: number; messageId: number }>).find(
        (f) => f.messageId === messageId,
      )!.id;
    for (const [id, verb] of [
      [held.id, "approve"],
      [rejected.id, "reject"],
    ] as const) {
      const res = await t.app.inject({
        method: "POST",
        url: `/api/admin/moderation/flags/${flagOf(id)}/${verb}`,
        headers: t.admin.headers,
      });
      expect(res.statusCode).toBe(200);
    }
    expect((await hits(bob, { q: w })).map((h) => h.messageId)).toEqual([held.id]);
  });

  it("takes any text as words: quotes, operators and other syntax are never an error", async () => {
    const w = word();
    await posted(alice, `syntax ${w} AND more`);
    for (const q of [
      `"${w}`,
      `${w} OR`,
      `NEAR(${w}`,
      `${w} -x`,
      `body: ${w}`,
      `${w}' & !`,
      `room_id : ${roomId} ${w}`,
      `(${w}) *`,
      `${w}:*`,
      `{${w}}^`,
    ]) {
      const res = await search(alice, { q });
      expect(res.statusCode, `${q}: ${res.body}`).toBe(200);
    }
    expect(await hits(alice, { q: `"${w} AND` })).toHaveLength(1);
    // The room's id is no word of the message: the index's room column is not searched as text.
    expect(await hits(alice, { q: `${w} ${roomId}` })).toEqual([]);
  });

  it("finds a message far older than the newest ones, and pages across them", async () => {
    const w = word();
    const old = await posted(alice, `ancient ${w}`);
    // A message with an id hundreds of thousands later, as on a server with that many messages.
    const now = Date.now();
    const later = await t.ctx.db
      .insertInto("messages")
      .values({
        id: 400_000 + old.id,
        room_id: roomId,
        sender_user_id: bob.id,
        inbound_webhook_id: null,
        sender_display_name: "bob",
        sender_avatar_url: null,
        content: `recent ${w}`,
        content_format: "markdown",
        content_text: `recent ${w}`,
        moderation_status: "none",
        created_at: now,
        updated_at: now,
      } as never)
      .returning("id")
      .executeTakeFirstOrThrow();
    expect((await hits(bob, { q: w })).map((h) => h.messageId)).toEqual([Number(later.id), old.id]);
    const first = await search(bob, { q: w, limit: 1 });
    const second = await hits(bob, { q: w, cursor: first.json().nextCursor });
    expect(second.map((h) => h.messageId)).toEqual([old.id]);
    expect((await hits(bob, { q: `ancient ${w}` })).map((h) => h.messageId)).toEqual([old.id]);
  });

  it("answers 400 invalid_query for a missing, empty, wordless, too long or too many-worded q", async () => {
    for (const query of [
      {} as Record<string, string>,
      { q: "" },
      { q: "   " },
      { q: "!!! ... ***" },
      { q: "a".repeat(201) },
      { q: Array.from({ length: 17 }, (_, i) => `w${i}`).join(" ") },
    ]) {
      const res = await search(alice, query);
      expect(res.statusCode, JSON.stringify(query)).toBe(400);
      expect(res.json().code).toBe("invalid_query");
    }
    expect((await search(alice, { q: "a".repeat(200) })).statusCode).toBe(200);
    const badBefore = await search(alice, { q: "x", before: "yesterday" });
    expect(badBefore.statusCode).toBe(400);
    const badCursor = await search(alice, { q: "x", cursor: "nope" });
    expect(badCursor.json().code).toBe("invalid_cursor");
    const anonymous = await t.app.inject({ method: "GET", url: "/api/search?q=x" });
    expect(anonymous.statusCode).toBe(401);
  });
});
