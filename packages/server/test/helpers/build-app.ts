import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  createAppContext,
  type AppContext,
  type CreateAppContextOptions,
} from "../../src/app-context.js";
import { buildApp, type BuildAppOptions, type ParleyApp } from "../../src/app.js";
import { startRealtimeWork } from "../../src/background-work.js";
import { loadConfig, type ConfigOverrides } from "../../src/config/load-config.js";
import type { UserRole } from "../../src/db/schema.js";
import { SQLITE, type TestDialect } from "./dialects.js";

export interface TestUser {
  id: number;
  username: string;
  token: string;
  /** `{ authorization: "Bearer ..." }` for app.inject(). */
  headers: { authorization: string };
}

export interface TestApp {
  readonly app: ParleyApp;
  readonly ctx: AppContext;
  readonly dataDir: string;
  readonly admin: TestUser;
  /** Creates a user with a token. */
  user(role?: UserRole, username?: string): Promise<TestUser>;
  close(): Promise<void>;
}

let counter = 0;

/** The master key test apps and spawned servers use (never a real one). */
export const TEST_MASTER_KEY = "7e57".repeat(16);

/**
 * A real app (real database of the given dialect, real auth) for app.inject() or listen(), with an
 * admin ready. Defaults suit tests: silent logs, http and private receivers allowed.
 */
export async function createTestApp(
  dialect: TestDialect = SQLITE,
  overrides: ConfigOverrides = {},
  appOptions: Omit<BuildAppOptions, "logger"> = {},
  contextOptions: Pick<CreateAppContextOptions, "tracing"> = {},
): Promise<TestApp> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-test-"));
  const testDb = await dialect.open();
  const config = loadConfig(
    {},
    {
      dataDir,
      logLevel: "silent",
      webhookAllowHttp: true,
      webhookAllowPrivateNetworks: true,
      // PostgreSQL keeps generated keys in the database, wrapped by a master key (a fixed one here).
      masterKey: TEST_MASTER_KEY,
      // Deliveries go through a send thread, as on a server with 3 cores or more (or 2 on SQLite),
      // whatever the machine running the tests.
      webhookSendThreads: 1,
      ...overrides,
    },
  );
  const ctx = await createAppContext(config, { database: testDb.database, ...contextOptions });
  const app = await buildApp(ctx, { ...appOptions, logger: false });
  await app.ready();
  // As the server does, minus the dispatcher (tests that deliver start it: startDeliveryWork).
  const realtime = await startRealtimeWork(ctx, app.stream, app.log);

  const user = async (role: UserRole = "user", username?: string): Promise<TestUser> => {
    const now = Date.now();
    const name = username ?? `${role}${++counter}`;
    const row = await ctx.db
      .insertInto("users")
      .values({
        username: name,
        display_name: name,
        role,
        status: "active",
        created_at: now,
        updated_at: now,
      })
      .returning(["id", "username"])
      .executeTakeFirstOrThrow();
    const { token } = await ctx.tokens.issue({ userId: row.id, role, ttlSeconds: 3600 });
    return {
      id: row.id,
      username: row.username,
      token,
      headers: { authorization: `Bearer ${token}` },
    };
  };
  const admin = await user("admin", "admin");

  return {
    app,
    ctx,
    dataDir,
    admin,
    user,
    async close() {
      await app.close();
      await Promise.all(realtime.map((work) => work.stop()));
      await testDb.cleanup();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
