import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { withStartLock, type StartLockLocation } from "../../../src/db/start-lock.js";
import { describeEachDialect, type TestDatabase } from "../../helpers/dialects.js";

describeEachDialect("the start lock on $name", (dialect) => {
  let database: TestDatabase | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    await database?.cleanup();
    database = undefined;
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  /** Where a process of this dialect would start: the test's schema, or a data dir of its own. */
  async function location(): Promise<StartLockLocation> {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-start-lock-"));
    const sqlitePath = path.join(dir, "parley.db");
    database = await dialect.open({ sqlitePath });
    return { databaseUrl: database.env.DATABASE_URL, sqlitePath };
  }

  it("a second start waits, and is told so, until the first has finished", async () => {
    const where = await location();
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const firstIn = new Promise<void>((resolve) => (entered = resolve));
    const first = withStartLock(where, async () => {
      order.push("first in");
      entered();
      await held;
      order.push("first out");
    });
    await firstIn;
    const second = withStartLock(
      where,
      async () => {
        order.push("second in");
      },
      () => order.push("second waits"),
    );
    await expect.poll(() => order.length, { interval: 20, timeout: 10_000 }).toBe(2);
    // Still waiting a while later.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(order).toEqual(["first in", "second waits"]);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(["first in", "second waits", "first out", "second in"]);
  });

  it("is given back when the work fails, so the next start goes in at once", async () => {
    const where = await location();
    await expect(
      withStartLock(where, async () => {
        throw new Error("migration failed");
      }),
    ).rejects.toThrow("migration failed");
    let waited = false;
    expect(
      await withStartLock(
        where,
        async () => "in",
        () => (waited = true),
      ),
    ).toBe("in");
    expect(waited).toBe(false);
  });
});
