import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect, describeEachOf, SQLITE } from "../../helpers/dialects.js";
import { createRoom } from "../../helpers/fixtures.js";
import { post } from "../chat/chat-helpers.js";

const word = () => `w${Math.random().toString(36).slice(2, 10)}`;

async function setUp(dialect: Parameters<typeof createTestApp>[0]) {
  const t = await createTestApp(dialect);
  const alice = await t.user("user", "alice");
  const roomId = (await createRoom(t, alice, "indexed")).id;
  return { t, alice, roomId };
}

async function posted(t: TestApp, user: TestUser, roomId: number, content: string) {
  const res = await post(t, user, roomId, content);
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { id: number }).id;
}

async function found(t: TestApp, user: TestUser, q: string): Promise<number[]> {
  const res = await t.app.inject({
    method: "GET",
    url: `/api/search?q=${encodeURIComponent(q)}`,
    headers: user.headers,
  });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().items as Array<{ messageId: number }>).map((hit) => hit.messageId);
}

/** SQLite: the message ids FTS5 holds for a word (what the index says, not the search). */
async function indexedIds(t: TestApp, w: string): Promise<number[]> {
  const { rows } = await sql<{ rowid: number }>`select "rowid" from "message_search"
    where "message_search" match ${`"body" : "${w}"`} order by "rowid"`.execute(t.ctx.db);
  return rows.map((row) => Number(row.rowid));
}

/** SQLite: FTS5's own check of its index's structure (throws SQLITE_CORRUPT_VTAB when broken). */
async function checkIndex(t: TestApp): Promise<void> {
  await sql`insert into "message_search" ("message_search", "rank") values ('integrity-check', 0)`.execute(
    t.ctx.db,
  );
}

describeEachDialect("search indexing after the commit on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let roomId: number;
  beforeAll(async () => {
    ({ t, alice, roomId } = await setUp(dialect));
    // No run of the indexer but the one a search makes: everything below happens before it.
    await t.ctx.searchIndexer.stop();
  });
  afterAll(async () => {
    await t.close();
  });

  it("finds what was posted before the search, a message edited before it was indexed by its new words only, and never one deleted before", async () => {
    const [kept, old, edited, gone] = [word(), word(), word(), word()];
    const keptId = await posted(t, alice, roomId, `kept ${kept}`);
    const editedId = await posted(t, alice, roomId, `draft ${old}`);
    const goneId = await posted(t, alice, roomId, `soon ${gone}`);
    const edit = await t.app.inject({
      method: "PATCH",
      url: `/api/rooms/${roomId}/messages/${editedId}`,
      headers: alice.headers,
      payload: { content: `final ${edited}` },
    });
    expect(edit.statusCode, edit.body).toBe(200);
    const deletion = await t.app.inject({
      method: "DELETE",
      url: `/api/rooms/${roomId}/messages/${goneId}`,
      headers: alice.headers,
    });
    expect(deletion.statusCode).toBe(204);
    if (dialect.name === "sqlite") {
      // Not indexed by their transactions.
      for (const w of [kept, old, edited, gone]) expect(await indexedIds(t, w)).toEqual([]);
    }

    expect(await found(t, alice, kept)).toEqual([keptId]);
    expect(await found(t, alice, edited)).toEqual([editedId]);
    expect(await found(t, alice, old)).toEqual([]);
    expect(await found(t, alice, gone)).toEqual([]);
    if (dialect.name === "sqlite") {
      expect(await indexedIds(t, edited)).toEqual([editedId]);
      for (const w of [old, gone]) expect(await indexedIds(t, w)).toEqual([]);
      await checkIndex(t);
      // Once indexed, an edit and a delete update the index in their own transaction.
      const again = word();
      const patch = await t.app.inject({
        method: "PATCH",
        url: `/api/rooms/${roomId}/messages/${editedId}`,
        headers: alice.headers,
        payload: { content: `again ${again}` },
      });
      expect(patch.statusCode, patch.body).toBe(200);
      expect(await indexedIds(t, again)).toEqual([editedId]);
      expect(await indexedIds(t, edited)).toEqual([]);
      const removal = await t.app.inject({
        method: "DELETE",
        url: `/api/rooms/${roomId}/messages/${keptId}`,
        headers: alice.headers,
      });
      expect(removal.statusCode).toBe(204);
      expect(await indexedIds(t, kept)).toEqual([]);
      await checkIndex(t);
    }
  });
});

describeEachOf([SQLITE])("the search indexer on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let roomId: number;
  beforeAll(async () => {
    ({ t, alice, roomId } = await setUp(dialect));
  });
  afterAll(async () => {
    await t.close();
  });

  it("indexes posts shortly after their commit without waiting for a search, many in one transaction", async () => {
    const w = word();
    const ids = await Promise.all(
      Array.from({ length: 20 }, (_, i) => posted(t, alice, roomId, `batch ${i} ${w}`)),
    );
    await expect
      .poll(() => indexedIds(t, w), { interval: 10, timeout: 5_000 })
      .toEqual([...ids].sort((a, b) => a - b));
    const { rows } = await sql<{ through: number }>`select "indexed_through" as "through"
      from "message_search_progress"`.execute(t.ctx.db);
    expect(Number(rows[0]!.through)).toBeGreaterThanOrEqual(Math.max(...ids));
    await checkIndex(t);
  });
});
