import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import SQLite from "better-sqlite3";
import { sql, type Kysely } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TransactionBatcher } from "../../../src/db/batched-transactions.js";
import { openDatabase, type DatabaseConnection } from "../../../src/db/open-database.js";
import { StatementBatcher } from "../../../src/db/statement-batcher.js";
import { describeEachOf, POSTGRES, TEST_DATABASE_URL } from "../../helpers/dialects.js";

/** The database time-out of these connections. */
const TIMEOUT_MS = 400;

/** Settles every promise and answers how long the last one took. */
async function settleAll(work: Array<Promise<unknown>>) {
  const started = performance.now();
  const results = await Promise.allSettled(work);
  return { results, tookMs: performance.now() - started };
}

const reasons = (results: PromiseSettledResult<unknown>[]) =>
  results.map((result) => (result.status === "rejected" ? result.reason : "fulfilled"));

// Units that queue together share one transaction and run one after another: behind a lock held
// elsewhere, each would wait out the time-out in turn, and the last would answer after many.
describe(
  "TransactionBatcher behind a write lock held by another connection",
  { tags: ["sqlite"] },
  () => {
    let dir: string;
    let database: DatabaseConnection;
    let db: Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-batch-busy-"));
      database = openDatabase({ sqlitePath: path.join(dir, "db.sqlite"), timeoutMs: TIMEOUT_MS });
      db = database.db;
      await sql`create table t (v text not null)`.execute(db);
    });
    afterAll(async () => {
      await database.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it("fails the units queued behind the one that waited out the time-out at once, with its error", async () => {
      const other = new SQLite(path.join(dir, "db.sqlite"));
      other.exec("BEGIN IMMEDIATE");
      const batcher = new TransactionBatcher(db);
      const insert = (v: string) =>
        batcher.run(async (trx) => void (await sql`insert into t (v) values (${v})`.execute(trx)));
      let settled;
      try {
        settled = await settleAll([insert("a"), insert("b"), insert("c"), insert("d")]);
      } finally {
        other.exec("ROLLBACK");
        other.close();
      }
      expect(reasons(settled.results).map((reason) => (reason as { code?: string }).code)).toEqual(
        Array(4).fill("SQLITE_BUSY"),
      );
      expect(settled.tookMs).toBeLessThan(2 * TIMEOUT_MS);
      // Nothing of them was kept, and the batcher goes on.
      await insert("e");
      expect((await sql`select v from t`.execute(db)).rows).toEqual([{ v: "e" }]);
    });
  },
);

describeEachOf([POSTGRES])(
  "StatementBatcher behind a lock held by another connection on $name",
  (dialect) => {
    let opened: Awaited<ReturnType<typeof dialect.open>>;
    let pool: pg.Pool;
    let schema: string;

    beforeAll(async () => {
      opened = await dialect.open({ timeoutMs: TIMEOUT_MS });
      pool = opened.database.pgPool!;
      await pool.query("create table t (v text not null)");
      schema = (await pool.query<{ schema: string }>("select current_schema() as schema")).rows[0]!
        .schema;
    });
    afterAll(async () => {
      await opened.cleanup();
    });

    it("fails every statement of the batch with the lock time-out, instead of each waiting for it in turn", async () => {
      const other = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await other.connect();
      await other.query("begin");
      await other.query(`lock table "${schema}".t in exclusive mode`);
      // One batch at a time: the statements queue behind each other.
      const batcher = new StatementBatcher(pool, 1);
      const insert = (v: string) =>
        batcher.run({ name: "insert_t", text: "insert into t (v) values ($1)", values: [v] });
      let settled;
      try {
        settled = await settleAll([insert("a"), insert("b"), insert("c"), insert("d")]);
      } finally {
        await other.query("rollback");
        await other.end();
      }
      expect(reasons(settled.results).map((reason) => (reason as { code?: string }).code)).toEqual(
        Array(4).fill("55P03"),
      );
      expect(settled.tookMs).toBeLessThan(2 * TIMEOUT_MS);
      await insert("e");
      expect((await pool.query("select v from t")).rows).toEqual([{ v: "e" }]);
    });
  },
);
