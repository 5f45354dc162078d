import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import SQLite from "better-sqlite3";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postMessage } from "../../../src/chat/post-message.js";
import type pg from "pg";
import { TransactionBatcher } from "../../../src/db/batched-transactions.js";
import { channelFor } from "../../../src/db/listen-channel.js";
import { StatementBatcher, type CombinedForm } from "../../../src/db/statement-batcher.js";
import { STREAM_CHANNEL } from "../../../src/realtime/postgres-bus.js";
import { openDatabase, type DatabaseConnection } from "../../../src/db/open-database.js";
import { createTestApp, type TestApp } from "../../helpers/build-app.js";
import { describeEachOf, POSTGRES, SQLITE, type TestDialect } from "../../helpers/dialects.js";
import { EVENT_NAMES } from "../../../src/events/event-catalogue.js";
import { createRoom, insertEndpoint } from "../../helpers/fixtures.js";
import { countRows, recordEvents } from "../chat/chat-helpers.js";

// SQLite in a file, so a second connection can check what is committed.
const sqliteDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-batch-"));
const sqliteFile = path.join(sqliteDir, "parley.db");
const fileSqlite: TestDialect = {
  name: "sqlite",
  open: () => SQLITE.open({ sqlitePath: sqliteFile }),
};
describeEachOf([fileSqlite, POSTGRES])("concurrent writes on $name", (dialect) => {
  let t: TestApp;
  let endpoint: number;
  /** Reads through its own connection: sees only what is committed. */
  let committedMessageIds: (roomId: number) => Promise<number[]>;
  let closeReader = async () => {};

  beforeAll(async () => {
    t = await createTestApp(dialect);
    endpoint = (await insertEndpoint(t, { events: EVENT_NAMES })).id;
    if (dialect.name === "sqlite") {
      const reader = new SQLite(sqliteFile, { readonly: true });
      const select = reader.prepare("select id from messages where room_id = ? order by id");
      committedMessageIds = async (roomId) =>
        (select.all(roomId) as Array<{ id: number }>).map((row) => row.id);
      closeReader = async () => void reader.close();
    } else {
      // A pool connection of its own outside any transaction: PostgreSQL shows it committed rows only.
      committedMessageIds = async (roomId) =>
        (
          await t.ctx.db
            .selectFrom("messages")
            .select("id")
            .where("room_id", "=", roomId)
            .orderBy("id")
            .execute()
        ).map((row) => row.id);
    }
  });
  afterAll(async () => {
    await closeReader();
    await t.close();
    fs.rmSync(sqliteDir, { recursive: true, force: true });
  });

  const sender = () => ({
    type: "user" as const,
    userId: t.admin.id,
    username: "admin",
    displayName: "Admin",
  });
  const send = (roomId: number, content: string) =>
    postMessage(t.ctx, { roomId, content, sender: sender() });

  async function deliveredMessageIds(): Promise<number[]> {
    const rows = await t.ctx.db
      .selectFrom("webhook_deliveries")
      .select("body")
      .where("webhook_id", "=", endpoint)
      .where("event", "=", "MESSAGE_CREATED")
      .orderBy("id")
      .execute();
    return rows.map(
      (row) => (JSON.parse(row.body) as { data: { messageId: number } }).data.messageId,
    );
  }

  it("fails only the post whose room is gone; the others commit with their events", async () => {
    const live = await createRoom(t, t.admin, "live");
    const doomed = await createRoom(t, t.admin, "doomed");
    await t.ctx.db
      .updateTable("rooms")
      .set({ deleted_at: Date.now() })
      .where("id", "=", doomed.id)
      .execute();
    const messagesBefore = await countRows(t, "messages");
    const deliveredBefore = new Set(await deliveredMessageIds());
    const seen = recordEvents(t);

    const results = await Promise.allSettled([
      send(live.id, "one"),
      send(doomed.id, "lost"),
      send(live.id, "two"),
      send(live.id, "three"),
    ]);
    seen.stop();

    expect(results.map((r) => r.status)).toEqual([
      "fulfilled",
      "rejected",
      "fulfilled",
      "fulfilled",
    ]);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: "not_found" });
    const ids = results.flatMap((r) => (r.status === "fulfilled" ? [r.value.id] : []));
    expect(await committedMessageIds(live.id)).toEqual(expect.arrayContaining(ids));
    expect(await committedMessageIds(doomed.id)).toEqual([]);
    expect((await countRows(t, "messages")) - messagesBefore).toBe(3);
    // Exactly one MESSAGE_CREATED per committed message: queued for the endpoint and reported.
    const byId = (a: number, b: number) => a - b;
    expect(
      (await deliveredMessageIds()).filter((id) => !deliveredBefore.has(id)).sort(byId),
    ).toEqual(ids.sort(byId));
    expect(seen.events.map(([event]) => event)).toEqual([
      "MESSAGE_CREATED",
      "MESSAGE_CREATED",
      "MESSAGE_CREATED",
    ]);
    expect(
      seen.events.map(([, data]) => (data as { messageId: number }).messageId).sort(byId),
    ).toEqual(ids);
  });

  it("answers a post only once its message and its delivery are committed", async () => {
    const room = await createRoom(t, t.admin, "visible");
    const checks = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        send(room.id, `m${i}`).then(async (posted) => ({
          posted,
          visible: (await committedMessageIds(room.id)).includes(posted.id),
          delivered: (await deliveredMessageIds()).includes(posted.id),
        })),
      ),
    );
    for (const check of checks) expect(check).toMatchObject({ visible: true, delivered: true });
  });

  it("gives message ids in commit order per room, in call order on SQLite", async () => {
    const room = await createRoom(t, t.admin, "ordered");
    const ids: number[] = [];
    for (let wave = 0; wave < 3; wave++) {
      const posted = await Promise.all(
        Array.from({ length: 10 }, (_, i) => send(room.id, `w${wave} m${i}`)),
      );
      ids.push(...posted.map((p) => p.id));
    }
    const ascending = [...ids].sort((a, b) => a - b);
    expect(await committedMessageIds(room.id)).toEqual(ascending);
    // SQLite writes one unit at a time, in the order they were queued: ids and deliveries follow
    // the order of the calls. (PostgreSQL runs concurrent transactions side by side.)
    if (dialect.name === "sqlite") {
      expect(ids).toEqual(ascending);
      expect((await deliveredMessageIds()).filter((id) => ids.includes(id))).toEqual(ids);
    }
  });
});

describeEachOf([POSTGRES])("posts combined into one statement on $name", (dialect) => {
  let t: TestApp;
  let endpoint: number;
  /** The names of the statements the pool's connections run (prepared ones), in order. */
  let names: string[] = [];
  let restore = () => {};
  let listener: pg.PoolClient;
  let notified: number[] = [];

  beforeAll(async () => {
    t = await createTestApp(dialect);
    endpoint = (await insertEndpoint(t, { events: EVENT_NAMES })).id;
    const client = await t.ctx.database.pgPool!.connect();
    const Client = Object.getPrototypeOf(client) as { query: (...args: unknown[]) => unknown };
    client.release();
    const query = Client.query;
    Client.query = function (this: unknown, ...args: unknown[]) {
      const config = args[0] as { name?: string } | string;
      names.push(typeof config === "string" ? config : (config.name ?? "(unnamed)"));
      return query.apply(this, args);
    };
    restore = () => void (Client.query = query);
    // The live stream's notifications, as another process hears them.
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(
      t.ctx.db,
    );
    listener = await t.ctx.database.pgPool!.connect();
    listener.on("notification", (n) => {
      const payload = JSON.parse(n.payload ?? "{}") as { e?: string; d?: { messageId: number } };
      if (payload.e === "MESSAGE_CREATED") notified.push(payload.d!.messageId);
    });
    await listener.query(`listen "${channelFor(STREAM_CHANNEL, rows[0]!.schema)}"`);
  });
  afterAll(async () => {
    restore();
    listener?.release();
    await t.close();
  });

  const send = (roomId: number, content: string, displayName = "Admin") =>
    postMessage(t.ctx, {
      roomId,
      content,
      sender: { type: "user", userId: t.admin.id, username: "admin", displayName },
    });
  const postNames = () => names.filter((name) => name.startsWith("parley_post_message"));

  /** Waits until the listener heard `ids` (a round trip on its connection flushes them in). */
  async function heard(ids: number[]): Promise<number[]> {
    for (let i = 0; i < 50 && !ids.every((id) => notified.includes(id)); i++)
      await listener.query("select 1");
    return notified.filter((id) => ids.includes(id));
  }

  it("runs the posts that arrive together as one statement: ids, deliveries and notifications in call order, a refused post writes nothing", async () => {
    const live = await createRoom(t, t.admin, "combined");
    const doomed = await createRoom(t, t.admin, "combined doomed");
    await t.ctx.db
      .updateTable("rooms")
      .set({ deleted_at: Date.now() })
      .where("id", "=", doomed.id)
      .execute();
    const outsider = await t.user("user", "outsider");
    const messagesBefore = await countRows(t, "messages");
    names = [];
    notified = [];
    const seen = recordEvents(t);

    const results = await Promise.allSettled([
      send(live.id, "one"),
      send(doomed.id, "lost"),
      send(live.id, "two"),
      postMessage(t.ctx, {
        roomId: live.id,
        content: "not a member",
        sender: { type: "user", userId: outsider.id, username: "outsider", displayName: "O" },
      }),
      send(live.id, "three"),
    ]);
    seen.stop();

    // One statement, without BEGIN and COMMIT.
    expect(postNames()).toHaveLength(1);
    expect(postNames()[0]).toMatch(/^parley_post_message_batch_/);
    expect(names).not.toContain("begin");
    expect(results.map((r) => r.status)).toEqual([
      "fulfilled",
      "rejected",
      "fulfilled",
      "rejected",
      "fulfilled",
    ]);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: "not_found" });
    expect((results[3] as PromiseRejectedResult).reason).toMatchObject({ code: "not_a_member" });
    const ids = results.flatMap((r) => (r.status === "fulfilled" ? [r.value.id] : []));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect((await countRows(t, "messages")) - messagesBefore).toBe(3);
    const stored = await t.ctx.db
      .selectFrom("messages")
      .select(["id", "content"])
      .where("room_id", "in", [live.id, doomed.id])
      .orderBy("id")
      .execute();
    expect(stored).toEqual([
      { id: ids[0], content: "one" },
      { id: ids[1], content: "two" },
      { id: ids[2], content: "three" },
    ]);
    const deliveries = await t.ctx.db
      .selectFrom("webhook_deliveries")
      .select(["body", "message_id", "room_id"])
      .where("webhook_id", "=", endpoint)
      .where("message_id", "in", ids)
      .orderBy("message_id")
      .execute();
    expect(deliveries.map((d) => [d.message_id, d.room_id])).toEqual(
      ids.map((id) => [id, live.id]),
    );
    for (const delivery of deliveries) {
      const body = JSON.parse(delivery.body) as { webhookId: number; data: { messageId: number } };
      expect(body).toMatchObject({ webhookId: endpoint, data: { messageId: delivery.message_id } });
    }
    expect(seen.events.map(([, data]) => (data as { messageId: number }).messageId)).toEqual(ids);
    expect(await heard(ids)).toEqual(ids);
  });

  it("runs each post of a combined statement that failed on its own: each gets its own answer", async () => {
    const room = await createRoom(t, t.admin, "fallback");
    const messagesBefore = await countRows(t, "messages");
    names = [];
    // A display name longer than the column: the combined statement fails, then only this post.
    const results = await Promise.allSettled([
      send(room.id, "one"),
      send(room.id, "too long", "x".repeat(201)),
      send(room.id, "two"),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: "22001" });
    expect(postNames()[0]).toMatch(/^parley_post_message_batch_/);
    expect(
      postNames()
        .slice(1)
        .every((name) => !name.includes("_batch_")),
    ).toBe(true);
    expect((await countRows(t, "messages")) - messagesBefore).toBe(2);
    const ids = results.flatMap((r) => (r.status === "fulfilled" ? [r.value.id] : []));
    expect(await heard(ids)).toEqual(ids);
  });
});

describe("TransactionBatcher", () => {
  let database: DatabaseConnection;
  let batcher: TransactionBatcher<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const db = () => database.db as any; // eslint-disable-line @typescript-eslint/no-explicit-any

  beforeAll(async () => {
    database = openDatabase({ sqlitePath: ":memory:" });
    await sql`create table t (v text not null unique)`.execute(database.db);
    batcher = new TransactionBatcher(database.db);
  });
  afterAll(async () => {
    await database.close();
  });

  const insert = (v: string) =>
    batcher.run(async (trx) => void (await trx.insertInto("t").values({ v }).execute()));
  const values = async () =>
    ((await db().selectFrom("t").select("v").orderBy("v").execute()) as Array<{ v: string }>).map(
      (r) => r.v,
    );

  it("runs units queued together in one transaction and rolls a failing unit back alone", async () => {
    const transactions = new Set<unknown>();
    const results = await Promise.allSettled([
      batcher.run(async (trx) => void transactions.add(trx)),
      insert("a"),
      insert("a"), // unique violation: rolled back to its savepoint
      batcher.run(async (trx) => {
        await trx.insertInto("t").values({ v: "half" }).execute();
        throw new Error("after a write");
      }),
      insert("b"),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "rejected",
      "rejected",
      "fulfilled",
    ]);
    expect((results[3] as PromiseRejectedResult).reason).toMatchObject({
      message: "after a write",
    });
    expect(await values()).toEqual(["a", "b"]);
    await batcher.run(async (trx) => void transactions.add(trx));
    // The five shared one transaction; a later unit got one of its own.
    expect(transactions.size).toBe(2);
  });

  it("fails the units that ran when the transaction breaks, and runs the rest in the next one", async () => {
    const results = await Promise.allSettled([
      insert("c"),
      batcher.run(async (trx) => {
        // Ends the transaction under the batch, as an I/O error or a full disk would.
        await sql`rollback`.execute(trx);
        throw new Error("transaction lost");
      }),
      insert("d"),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({
      message: "transaction lost",
    });
    expect(await values()).toEqual(["a", "b", "d"]);
  });

  it("resolves a lone unit as a plain transaction would", async () => {
    await expect(insert("e")).resolves.toBeUndefined();
    await expect(insert("e")).rejects.toMatchObject({ code: "SQLITE_CONSTRAINT_UNIQUE" });
    expect(await values()).toEqual(["a", "b", "d", "e"]);
  });
});

describeEachOf([POSTGRES])("StatementBatcher on $name", (dialect) => {
  let opened: Awaited<ReturnType<TestDialect["open"]>>;
  let batcher: StatementBatcher;
  let pool: pg.Pool;

  beforeAll(async () => {
    opened = await dialect.open();
    pool = opened.database.pgPool!;
    await pool.query("create table t (v text not null unique)");
    batcher = new StatementBatcher(pool, 1);
  });
  afterAll(async () => {
    await opened.cleanup();
  });

  /** Inserts `v` and answers the transaction it ran in. */
  const insert = (v: string) =>
    batcher.run({
      name: "insert_t",
      text: "insert into t (v) values ($1) returning txid_current() as tx",
      values: [v],
    });
  const values = async () =>
    (await pool.query<{ v: string }>("select v from t order by v")).rows.map((r) => r.v);

  it("commits statements queued together in one transaction; a failing one fails alone", async () => {
    const results = await Promise.allSettled([
      insert("a"),
      insert("b"),
      insert("a"), // unique violation: the batch rolls back, the others run again
      insert("c"),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "rejected",
      "fulfilled",
    ]);
    expect((results[2] as PromiseRejectedResult).reason).toMatchObject({ code: "23505" });
    expect(await values()).toEqual(["a", "b", "c"]);
    const transactions = results.flatMap((r) =>
      r.status === "fulfilled" ? [String(r.value.rows[0].tx)] : [],
    );
    // Re-run after the rollback, the three committed together.
    expect(new Set(transactions).size).toBe(1);
  });

  it("runs a lone statement as its own transaction, and answers its error", async () => {
    await expect(insert("d")).resolves.toMatchObject({ rowCount: 1 });
    await expect(insert("d")).rejects.toMatchObject({ code: "23505" });
    expect(await values()).toEqual(["a", "b", "c", "d"]);
  });

  /** Inserts `v`, combined with its neighbours into one statement; answers its transaction. */
  const insertCombined = (v: string, combine?: () => never) => {
    const form: CombinedForm & { v: string } = {
      key: "insert_t",
      v,
      combine: (forms) =>
        combine?.() ?? {
          name: "insert_t_combined",
          text: `with "input" as (select * from unnest($1::text[]) with ordinality as i(v, ord)),
            "inserted" as (insert into t (v) select v from "input" order by ord returning v)
            select ord, txid_current() as tx, (select count(*) from "inserted") as n from "input"`,
          values: [forms.map((f) => (f as typeof form).v)],
        },
    };
    return batcher.run(() => ({ name: "insert_t", text: INSERT_T, values: [v] }), form);
  };
  const INSERT_T = "insert into t (v) values ($1) returning txid_current() as tx";

  it("combines neighbours with a combined form into one statement, each answered its row", async () => {
    const results = await Promise.all([insertCombined("e"), insertCombined("f"), insert("g")]);
    expect(results.map((r) => r.rows.length)).toEqual([1, 1, 1]);
    expect(results.map((r) => Number(r.rows[0].ord ?? 0))).toEqual([1, 2, 0]);
    expect(Number(results[0]!.rows[0].n)).toBe(2);
    // Two statements, one transaction.
    expect(new Set(results.map((r) => String(r.rows[0].tx))).size).toBe(1);
    expect(await values()).toEqual(["a", "b", "c", "d", "e", "f", "g"]);
  });

  it("runs the units of a failed combined statement one by one, each with its own answer", async () => {
    const results = await Promise.allSettled([
      insertCombined("h"),
      insertCombined("a"), // unique violation: the combined statement fails
      insertCombined("i"),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: "23505" });
    // Answered by the statements they ran alone.
    for (const r of results)
      if (r.status === "fulfilled") expect(r.value.rows[0]).not.toHaveProperty("ord");
    expect(await values()).toEqual(["a", "b", "c", "d", "e", "f", "g", "h", "i"]);
  });

  it("runs units alone when combining them throws", async () => {
    const fail = () => {
      throw new Error("cannot combine");
    };
    const results = await Promise.all([insertCombined("j", fail), insertCombined("k", fail)]);
    for (const r of results) expect(r.rows[0]).not.toHaveProperty("ord");
    expect((await values()).slice(-2)).toEqual(["j", "k"]);
  });
});
