import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { killAllServers, spawnServer } from "../helpers/spawn-server.js";

const dirs: string[] = [];

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-cli-"));
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  await killAllServers();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe("parley serve", () => {
  it("creates the admin on first start, prints a working token, and shuts down cleanly on SIGTERM", async () => {
    const dataDir = tempDir();
    const server = await spawnServer({ env: { PARLEY_DATA_DIR: dataDir } });
    expect(server.adminToken).toBeTruthy();
    expect(fs.existsSync(path.join(dataDir, "parley.db"))).toBe(true);

    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    const users = await fetch(`${server.url}/api/admin/users`, {
      headers: { authorization: `Bearer ${server.adminToken}` },
    });
    expect(users.status).toBe(200);
    const body = (await users.json()) as { items: Array<{ username: string; role: string }> };
    expect(body.items).toContainEqual(
      expect.objectContaining({ username: "admin", role: "admin" }),
    );

    expect(await server.kill("SIGTERM")).toBe(0);

    // Second start on the same data: no new admin, no token printed, the old token still works.
    const again = await spawnServer({ env: { PARLEY_DATA_DIR: dataDir } });
    expect(again.adminToken).toBeUndefined();
    const still = await fetch(`${again.url}/api/admin/users`, {
      headers: { authorization: `Bearer ${server.adminToken}` },
    });
    expect(still.status).toBe(200);
  });

  it("exits 1 with a message naming the variable when the configuration is invalid", async () => {
    const result = await runCli(["serve"], { PARLEY_PORT: "abc", PARLEY_DATA_DIR: tempDir() });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("PARLEY_PORT");
    expect(result.stderr).toContain("abc");
  });

  it("mints tokens with `parley token create` that the server accepts", async () => {
    const dataDir = tempDir();
    const server = await spawnServer({ env: { PARLEY_DATA_DIR: dataDir } });
    const minted = await runCli(
      ["token", "create", "--role", "bot", "--subject", "ci-bot", "--ttl", "1h"],
      { PARLEY_DATA_DIR: dataDir },
    );
    expect(minted.code, minted.stderr).toBe(0);
    const token = minted.stdout.trim();
    expect(token.split(".")).toHaveLength(3);
    // A bot token is valid but not an admin: 403, not 401.
    const res = await fetch(`${server.url}/api/admin/users`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(403);

    const wrongRole = await runCli(["token", "create", "--role", "admin", "--subject", "ci-bot"], {
      PARLEY_DATA_DIR: dataDir,
    });
    expect(wrongRole.code).toBe(1);
    expect(wrongRole.stderr).toContain("has the role bot");

    const badTtl = await runCli(
      ["token", "create", "--role", "bot", "--subject", "ci-bot", "--ttl", "30 days"],
      { PARLEY_DATA_DIR: dataDir },
    );
    expect(badTtl.code).toBe(2);
    expect(badTtl.stderr).toContain('invalid TTL "30 days": use a number of seconds or 90s');
    expect(badTtl.stdout).toBe("");
  });

  it("`parley token create` refuses to create a database unless --init is given, and says which it used", async () => {
    const emptyDir = tempDir();
    const refused = await runCli(["token", "create", "--role", "admin", "--subject", "admin"], {
      PARLEY_DATA_DIR: emptyDir,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`no Parley database at ${path.join(emptyDir, "parley.db")}`);
    expect(refused.stderr).toContain("--init");
    expect(refused.stdout).toBe("");
    expect(fs.existsSync(path.join(emptyDir, "parley.db"))).toBe(false);

    const created = await runCli(
      ["token", "create", "--role", "admin", "--subject", "admin", "--init"],
      { PARLEY_DATA_DIR: emptyDir },
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain(`using the database at ${path.join(emptyDir, "parley.db")}`);
    expect(created.stdout.trim().split(".")).toHaveLength(3);
  });

  it("`parley migrate` creates then reports the schema; `parley keys rotate` keeps old tokens working", async () => {
    const dataDir = tempDir();
    const parley = (...args: string[]) => runCli(args, { PARLEY_DATA_DIR: dataDir });
    const migrated = await parley("migrate");
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toMatch(/^applied: \S+/);
    expect((await parley("migrate")).stdout).toBe("the schema is up to date\n");

    const before = await parley(
      "token",
      "create",
      "--role",
      "admin",
      "--subject",
      "admin",
      "--init",
    );
    expect(before.code, before.stderr).toBe(0);
    const rotated = await parley("keys", "rotate");
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toMatch(/^new token-signing key: \S+\n/);
    const after = await parley("token", "create", "--role", "admin", "--subject", "admin");
    expect(after.code, after.stderr).toBe(0);

    const server = await spawnServer({ env: { PARLEY_DATA_DIR: dataDir } });
    for (const token of [before.stdout.trim(), after.stdout.trim()]) {
      const res = await fetch(`${server.url}/api/admin/webhooks`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
    }
  });
});
