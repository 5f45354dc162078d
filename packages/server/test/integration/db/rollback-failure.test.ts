import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TransactionBatcher } from "../../../src/db/batched-transactions.js";
import { rollbackFailureOf } from "../../../src/db/database-errors.js";
import { openDatabase, type DatabaseConnection } from "../../../src/db/open-database.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

// What a full disk does to SQLite: the statement fails and SQLite rolls the transaction back by
// itself; the ROLLBACK that follows then fails with "cannot rollback - no transaction is active".
// A trigger that raises ROLLBACK does the same, on any disk.
describe("a ROLLBACK that fails after an error, on sqlite", { tags: ["sqlite"] }, () => {
  let database: DatabaseConnection;
  let db: Db;

  beforeAll(async () => {
    database = openDatabase({ sqlitePath: ":memory:" });
    db = database.db;
    await sql`create table t (v text not null)`.execute(db);
    await sql`
      create trigger refuse before insert on t when new.v = 'refused'
      begin select raise(rollback, 'the cause'); end
    `.execute(db);
  });
  afterAll(async () => {
    await database.close();
  });

  const insert = (v: string) => async (trx: Db) =>
    void (await sql`insert into t (v) values (${v})`.execute(trx));
  const failInside = async (trx: Db) => {
    await insert("lost")(trx);
    await insert("refused")(trx);
  };

  it("throws the error that made the transaction roll back, with the failed ROLLBACK beside it", async () => {
    const error = await db
      .transaction()
      .execute(failInside)
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ message: "the cause", code: "SQLITE_CONSTRAINT_TRIGGER" });
    expect(String(rollbackFailureOf(error))).toMatch(/cannot rollback - no transaction is active/);
    expect((await sql`select count(*) as n from t`.execute(db)).rows).toEqual([{ n: 0 }]);
  });

  it("fails every unit of a shared transaction with that error, not with the lost savepoint", async () => {
    const batcher = new TransactionBatcher(db);
    const results = await Promise.allSettled([
      batcher.run(insert("a")),
      batcher.run(failInside),
      batcher.run(insert("b")),
    ]);
    expect(results.map((result) => result.status)).toEqual(["rejected", "rejected", "fulfilled"]);
    // The first unit ran in the transaction the second one's error ended: it fails with that error.
    expect((results[0] as PromiseRejectedResult).reason).toMatchObject({ message: "the cause" });
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ message: "the cause" });
    expect((await sql`select v from t`.execute(db)).rows).toEqual([{ v: "b" }]);
  });
});
