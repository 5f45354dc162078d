import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { SignJWT } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { createAppContext } from "../../../src/app-context.js";
import { loadConfig, type ConfigOverrides } from "../../../src/config/load-config.js";
import { rotateJwtKey } from "../../../src/config/server-keys.js";
import {
  describeEachDialect,
  POSTGRES,
  SQLITE,
  type TestDatabase,
} from "../../helpers/dialects.js";

const MASTER = "ab".repeat(32);
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-keys-"));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function configFor(dataDir: string, overrides: ConfigOverrides = {}) {
  return loadConfig({}, { dataDir, logLevel: "silent", ...overrides });
}

async function contextOn(database: TestDatabase, overrides: ConfigOverrides, dataDir: string) {
  return createAppContext(configFor(dataDir, overrides), { database: database.database });
}

describeEachDialect("server keys on $name", (dialect) => {
  async function freshDatabase(): Promise<TestDatabase> {
    const database = await dialect.open();
    cleanups.push(() => database.cleanup());
    return database;
  }

  it("rotates the token key with a kid; tokens of the previous key keep working", async () => {
    const database = await freshDatabase();
    const dataDir = tempDir();
    const running = await contextOn(database, { masterKey: MASTER }, dataDir);
    const before = await running.tokens.issue({ userId: 1, role: "user", ttlSeconds: 600 });
    const beforeHeader = JSON.parse(
      Buffer.from(before.token.split(".")[0]!, "base64url").toString(),
    );
    expect(beforeHeader.kid).toBe("jwt-secret");

    const { kid } = await rotateJwtKey(
      configFor(dataDir, { masterKey: MASTER }),
      database.database,
    );
    const restarted = await contextOn(database, { masterKey: MASTER }, dataDir);
    const after = await restarted.tokens.issue({ userId: 1, role: "user", ttlSeconds: 600 });
    expect(JSON.parse(Buffer.from(after.token.split(".")[0]!, "base64url").toString()).kid).toBe(
      kid,
    );
    // The restarted process accepts the old key's token; the one still running since before the
    // rotation learns the new key from the first token that names it.
    expect((await restarted.tokens.verify(before.token)).subject).toBe("1");
    expect((await running.tokens.verify(after.token)).subject).toBe("1");

    // A token from before kids (no kid in its header) is checked against every key.
    const legacy = await new SignJWT({ role: "user" })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("1")
      .setIssuer("parley")
      .setExpirationTime("10m")
      .sign(running.keys.jwtKeys.at(-1)!.secret);
    expect((await restarted.tokens.verify(legacy)).subject).toBe("1");
    await expect(
      restarted.tokens.verify(
        await new SignJWT({})
          .setProtectedHeader({ alg: "HS256", kid: "jwt-secret-1" })
          .setSubject("1")
          .setIssuer("parley")
          .setExpirationTime("10m")
          .sign(new TextEncoder().encode("x".repeat(64))),
      ),
    ).rejects.toThrow(/key id/);
  });

  it("deletes a replaced key only when no token it signed can still be valid", async () => {
    const database = await freshDatabase();
    const dataDir = tempDir();
    const config = configFor(dataDir, { masterKey: MASTER });
    await contextOn(database, { masterKey: MASTER }, dataDir);
    const t0 = Date.now();
    const first = await rotateJwtKey(config, database.database, t0);
    expect(first.retired).toEqual([]);
    const year = 367 * 24 * 3600 * 1000;
    const second = await rotateJwtKey(config, database.database, t0 + year);
    expect(second.retired).toEqual(["jwt-secret"]);
  });
});

describe("keys in PostgreSQL", { tags: ["postgres"] }, () => {
  const postgres = POSTGRES;
  async function freshDatabase(): Promise<TestDatabase> {
    const database = await postgres.open();
    cleanups.push(() => database.cleanup());
    return database;
  }
  async function storedKeys(database: TestDatabase) {
    return database.database.db.selectFrom("server_keys").select(["name", "value"]).execute();
  }

  it("refuses to start without a master key, naming the settings that fix it", async () => {
    const database = await freshDatabase();
    await expect(contextOn(database, {}, tempDir())).rejects.toThrow(
      /PARLEY_MASTER_KEY.*PARLEY_INSECURE_KEYS_IN_DATABASE/s,
    );
  });

  it("stores generated keys wrapped by the master key, never in plain text", async () => {
    const database = await freshDatabase();
    const ctx = await contextOn(database, { masterKey: MASTER }, tempDir());
    const rows = await storedKeys(database);
    expect(rows.map((row) => row.name).sort()).toEqual(["jwt-secret", "secret-key"]);
    for (const row of rows) expect(row.value).toMatch(/^wrapped:v1:/);
    expect(JSON.stringify(rows)).not.toContain(ctx.keys.secretKey.toString("hex"));
    expect(JSON.stringify(rows)).not.toContain(Buffer.from(ctx.keys.jwtSecret).toString());
  });

  it("reads the master key from a file, and refuses a wrong one", async () => {
    const database = await freshDatabase();
    const dir = tempDir();
    const file = path.join(dir, "master");
    fs.writeFileSync(file, Buffer.alloc(32, 7).toString("base64") + "\n", { mode: 0o600 });
    const first = await contextOn(database, { masterKeyFile: file }, dir);
    const again = await contextOn(database, { masterKeyFile: file }, dir);
    expect(again.keys.secretKey.equals(first.keys.secretKey)).toBe(true);
    await expect(contextOn(database, { masterKey: MASTER }, dir)).rejects.toThrow(/does not open/);
  });

  it("keeps plain keys only when told to, and wraps them at the first start with a master key", async () => {
    const database = await freshDatabase();
    const dir = tempDir();
    const plain = await contextOn(database, { insecureKeysInDatabase: true }, dir);
    expect((await storedKeys(database)).every((row) => !row.value.startsWith("wrapped:"))).toBe(
      true,
    );
    const wrapped = await contextOn(database, { masterKey: MASTER }, dir);
    expect(wrapped.keys.secretKey.equals(plain.keys.secretKey)).toBe(true);
    expect((await storedKeys(database)).every((row) => row.value.startsWith("wrapped:v1:"))).toBe(
      true,
    );
  });
});

describe("keys in the SQLite data dir", () => {
  it("are files only the owner can read", async () => {
    const dataDir = tempDir();
    const database = await SQLITE.open();
    cleanups.push(() => database.cleanup());
    await contextOn(database, {}, dataDir);
    for (const name of ["jwt-secret", "secret-key"])
      expect(fs.statSync(path.join(dataDir, name)).mode & 0o777).toBe(0o600);
  });
});
