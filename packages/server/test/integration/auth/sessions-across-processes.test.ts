import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createAppContext } from "../../../src/app-context.js";
import { buildApp, type ParleyApp } from "../../../src/app.js";
import { openDatabase, type DatabaseConnection } from "../../../src/db/open-database.js";
import { createTestApp, type TestApp } from "../../helpers/build-app.js";
import {
  describeEachDialect,
  type TestDatabase,
  type TestDialect,
} from "../../helpers/dialects.js";
import { PASSWORD, signIn, userWithPassword } from "./sign-in-helpers.js";

/**
 * Two apps on one database, as two `parley serve` processes are: a session ended in one is
 * refused by the other at its next request.
 */
describeEachDialect("sessions across processes on $name", (dialect) => {
  let shared: TestDatabase;
  let sqliteDir: string | undefined;
  let first: TestApp;
  /** The second process: the app alone, on its own connection to the same database. */
  let second: { app: ParleyApp };
  let secondConnection: DatabaseConnection;

  /** A new connection to `shared`'s database. */
  const connect = () =>
    dialect.name === "sqlite"
      ? openDatabase({ sqlitePath: path.join(sqliteDir!, "parley.db") })
      : openDatabase({ databaseUrl: shared.env.DATABASE_URL!, poolSize: 2 });
  const sameDatabase = (): TestDialect => ({
    name: dialect.name,
    async open() {
      const database = connect();
      return { database, env: shared.env, cleanup: () => database.close() };
    },
  });

  beforeAll(async () => {
    if (dialect.name === "sqlite") {
      sqliteDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-sessions-"));
      shared = await dialect.open({ sqlitePath: path.join(sqliteDir, "parley.db") });
    } else {
      shared = await dialect.open();
    }
    first = await createTestApp(sameDatabase());
    secondConnection = connect();
    const ctx = await createAppContext(first.ctx.config, { database: secondConnection });
    second = { app: await buildApp(ctx, { logger: false }) };
    await second.app.ready();
  });
  afterAll(async () => {
    await first?.close();
    await second?.app.close();
    await secondConnection?.close();
    await shared?.cleanup();
    if (sqliteDir) fs.rmSync(sqliteDir, { recursive: true, force: true });
  });

  it("logout in one process ends the session in the other at once", async () => {
    const user = await userWithPassword(first, PASSWORD);
    const browser = await signIn(first, user.username);
    const me = (t: { app: ParleyApp }) =>
      t.app.inject({ method: "GET", url: "/api/me", headers: { cookie: browser.cookie } });
    expect((await me(second)).statusCode).toBe(200);
    const out = await first.app.inject({
      method: "POST",
      url: "/api/auth/logout",
      headers: { cookie: browser.cookie, "x-parley-csrf": browser.csrf },
    });
    expect(out.statusCode).toBe(204);
    expect((await me(second)).statusCode).toBe(401);
    const byToken = await second.app.inject({
      method: "GET",
      url: "/api/me",
      headers: { authorization: `Bearer ${browser.token}` },
    });
    expect(byToken.statusCode).toBe(401);
  });

  it("a password change in one process ends the other sessions in the other", async () => {
    const user = await userWithPassword(first, PASSWORD);
    const here = await signIn(first, user.username);
    const there = await signIn(second, user.username);
    const res = await first.app.inject({
      method: "PUT",
      url: "/api/me/password",
      headers: { cookie: here.cookie, "x-parley-csrf": here.csrf },
      payload: { currentPassword: PASSWORD, newPassword: "another long password" },
    });
    expect(res.statusCode).toBe(204);
    const me = await second.app.inject({
      method: "GET",
      url: "/api/me",
      headers: { cookie: there.cookie },
    });
    expect(me.statusCode).toBe(401);
  });
});
