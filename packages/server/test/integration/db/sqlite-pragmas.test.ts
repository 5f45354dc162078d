import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { expect, it } from "vitest";
import { openDatabase } from "../../../src/db/open-database.js";

it("opens a SQLite file in WAL mode with savepoint journals kept in memory and secure delete on", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-pragmas-"));
  const connection = openDatabase({ sqlitePath: path.join(dir, "parley.db") });
  const pragma = async (name: string) =>
    Object.values((await sql.raw(`PRAGMA ${name}`).execute(connection.db)).rows[0] as object)[0];
  try {
    expect(await pragma("journal_mode")).toBe("wal");
    // 2 = MEMORY: a batch of posts (a savepoint each) writes no temporary journal file.
    expect(await pragma("temp_store")).toBe(2);
    expect(await pragma("synchronous")).toBe(1); // NORMAL
    expect(await pragma("foreign_keys")).toBe(1);
    // 1 = ON: freed space (a deleted message's content and revisions) is overwritten with zeros.
    expect(await pragma("secure_delete")).toBe(1);
  } finally {
    await connection.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
