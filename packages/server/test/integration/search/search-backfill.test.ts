import { afterAll, beforeAll, expect, it } from "vitest";
import { messageSearch } from "../../../src/db/migrations/017-message-search.js";
import { searchAfterCommit } from "../../../src/db/migrations/025-search-after-commit.js";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { createRoom } from "../../helpers/fixtures.js";
import { post } from "../chat/chat-helpers.js";

/**
 * Migrations 017 and 025 on a database that already has messages: 017 writes their text and
 * indexes the searchable ones, so search finds what was posted before it ran; after 025 the index
 * keeps up with new posts after their commit.
 */
describeEachDialect("search migration on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let roomId: number;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    alice = await t.user("user", "alice");
    roomId = (await createRoom(t, alice, "history")).id;
  });
  afterAll(async () => {
    await t.close();
  });

  const found = async (q: string) => {
    const res = await t.app.inject({
      method: "GET",
      url: `/api/search?q=${encodeURIComponent(q)}`,
      headers: alice.headers,
    });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().items as Array<{ messageId: number; snippet: string }>).map((hit) => [
      hit.messageId,
      hit.snippet,
    ]);
  };

  it("indexes the messages that were there before it, as the text a reader sees", async () => {
    const posted = await post(t, alice, roomId, "posted **earlier** today");
    expect(posted.statusCode).toBe(201);
    // Back to before 017 (025 builds on it), as a database of that time.
    await searchAfterCommit.down!(t.ctx.db);
    await messageSearch.down!(t.ctx.db);
    const row = (content: string, format: "markdown" | "html", extra: object = {}) =>
      t.ctx.db
        .insertInto("messages")
        .values({
          room_id: roomId,
          sender_user_id: alice.id,
          inbound_webhook_id: null,
          sender_display_name: "alice",
          sender_avatar_url: null,
          content,
          content_format: format,
          moderation_status: "none",
          created_at: Date.now(),
          ...extra,
        } as never)
        .returning("id")
        .executeTakeFirstOrThrow();
    const html = await row("<p>from an <em>older</em> release &amp; more</p>", "html");
    await row("hidden older", "markdown", { moderation_status: "QUARANTINED" });
    await row("", "markdown", { deleted_at: Date.now() });

    await messageSearch.up(t.ctx.db);
    await searchAfterCommit.up(t.ctx.db);

    expect(await found("earlier")).toEqual([
      [posted.json().id, "posted <mark>earlier</mark> today"],
    ]);
    expect(await found("older")).toEqual([
      [Number(html.id), "from an <mark>older</mark> release &amp; more"],
    ]);
    // Tag names are not words of the text.
    expect(await found("em")).toEqual([]);
    // And the index keeps up with what comes after.
    const later = await post(t, alice, roomId, "a later earlier");
    expect((await found("earlier")).map(([id]) => id)).toEqual([later.json().id, posted.json().id]);
  });
});
