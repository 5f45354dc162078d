import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { createRoom } from "../../helpers/fixtures.js";
import { joinRoom } from "./chat-helpers.js";

type Item = Record<string, unknown> & { id: number };

describeEachDialect("?updatedSince= on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let roomId: number;
  let clock: number;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    // A clock that only moves when told to, so each change has its own time.
    clock = Date.parse("2026-11-22T10:00:00.000Z");
    t.ctx.now = () => clock;
    alice = await t.user("user", "alice");
    bob = await t.user("user", "bob");
    roomId = (await createRoom(t, alice, "catch-up")).id;
    await joinRoom(t, bob, roomId);
  });
  afterAll(async () => {
    await t.close();
  });

  const tick = () => (clock += 1000);
  const call = (method: "POST" | "PATCH" | "DELETE", url: string, payload?: object) =>
    t.app.inject({
      method,
      url: `/api/rooms/${roomId}/messages${url}`,
      headers: alice.headers,
      payload,
    });
  const changes = async (
    since: number,
    extra = "",
  ): Promise<{ items: Item[]; nextCursor: string | null }> => {
    const res = await t.app.inject({
      method: "GET",
      url: `/api/rooms/${roomId}/messages?updatedSince=${new Date(since).toISOString()}${extra}`,
      headers: bob.headers,
    });
    expect(res.statusCode).toBe(200);
    return res.json();
  };

  it("lists the messages of both levels changed after the time, oldest change first, tombstones included", async () => {
    tick();
    const old = (await call("POST", "", { content: "old news" })).json().id;
    const unchanged = (await call("POST", "", { content: "never touched" })).json().id;
    tick();
    const since = clock;
    tick();
    const top = (await call("POST", "", { content: "new top" })).json().id;
    tick();
    const gone = (await call("POST", "", { content: "to delete" })).json().id;
    tick();
    await call("PATCH", `/${old}`, { content: "old news, corrected" });
    tick();
    const reply = (await call("POST", "", { content: "a reply", threadId: top })).json().id;
    tick();
    expect((await call("DELETE", `/${gone}`)).statusCode).toBe(204);

    const { items, nextCursor } = await changes(since);
    expect(nextCursor).toBeNull();
    // top changed twice (created, then a reply): it appears once, at its latest change.
    expect(items.map((m) => m.id)).toEqual([old, top, reply, gone]);
    expect(items.map((m) => m.id)).not.toContain(unchanged);
    expect(items.find((m) => m.id === old)).toMatchObject({
      revision: 2,
      content: "old news, corrected",
    });
    expect(items.find((m) => m.id === top)).toMatchObject({ replyCount: 1 });
    expect(items.find((m) => m.id === gone)).toMatchObject({ deleted: true });
    expect(items.find((m) => m.id === reply)).toMatchObject({ threadId: top });
    // Strictly later: nothing changed after the last change.
    expect((await changes(clock)).items).toEqual([]);
  });

  it("pages through changes that share a time without losing or repeating one", async () => {
    tick();
    const since = clock;
    tick();
    const ids: number[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await call("POST", "", { content: `same ms ${i}` })).json().id);
    const seen: number[] = [];
    let cursor: string | null = "";
    while (cursor !== null) {
      const page: { items: Item[]; nextCursor: string | null } = await changes(
        since,
        `&limit=2${cursor ? `&cursor=${cursor}` : ""}`,
      );
      seen.push(...page.items.map((m) => m.id));
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(ids);
  });

  it("refuses a time that is not ISO-8601", async () => {
    const bad = await t.app.inject({
      method: "GET",
      url: `/api/rooms/${roomId}/messages?updatedSince=yesterday`,
      headers: bob.headers,
    });
    expect(bad.statusCode).toBe(400);
  });

  it("with threadId, lists only that thread's changed replies", async () => {
    tick();
    const top = (await call("POST", "", { content: "thread" })).json().id;
    const early = (await call("POST", "", { content: "early reply", threadId: top })).json().id;
    tick();
    const since = clock;
    tick();
    await call("POST", "", { content: "unrelated top-level" });
    const late = (await call("POST", "", { content: "late reply", threadId: top })).json().id;
    tick();
    await call("PATCH", `/${early}`, { content: "early reply, edited" });
    const { items } = await changes(since, `&threadId=${top}`);
    expect(items.map((m) => m.id)).toEqual([late, early]);
    const refused = await t.app.inject({
      method: "GET",
      url: `/api/rooms/${roomId}/messages?updatedSince=${new Date(since).toISOString()}&threadId=${late}`,
      headers: bob.headers,
    });
    expect(refused.json().code).toBe("invalid_thread");
  });

  it("reads the room's changes along an index, not by scanning the room", async () => {
    const query = sql`SELECT id FROM messages WHERE room_id = ${roomId} AND updated_at > ${0}
      ORDER BY updated_at, id LIMIT 51`;
    let plan: string;
    if (dialect.name === "sqlite") {
      const { rows } = await sql`EXPLAIN QUERY PLAN ${query}`.execute(t.ctx.db);
      plan = rows.map((row) => Object.values(row as object).join(" ")).join("\n");
      expect(plan).not.toMatch(/USE TEMP B-TREE/);
    } else {
      // PostgreSQL picks a plan by its statistics (a small test table is cheaper to scan): with
      // sequential scans priced out, in one transaction, the index must serve the order too.
      plan = await t.ctx.db.transaction().execute(async (trx) => {
        await sql`SET LOCAL enable_seqscan = off`.execute(trx);
        const { rows } = await sql`EXPLAIN ${query}`.execute(trx);
        return rows.map((row) => Object.values(row as object).join(" ")).join("\n");
      });
      expect(plan).not.toMatch(/Sort/);
    }
    expect(plan).toMatch(/messages_room_updated/);
  });
});
