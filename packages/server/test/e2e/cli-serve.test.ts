import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { killAllServers, spawnServer } from "../helpers/spawn-server.js";

// Runs the BUILT command line (npm test builds first), the way an operator starts Parley.
const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../dist/cli.js");

const dirs: string[] = [];

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-cli-"));
  dirs.push(dir);
  return dir;
}

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PARLEY_LOG_LEVEL: "warn",
  };
  return { ...env, ...extra };
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

  it("exits 1 with a message naming the variable when the configuration is invalid", () => {
    const result = spawnSync(process.execPath, [CLI, "serve"], {
      env: cleanEnv({ PARLEY_PORT: "abc", PARLEY_DATA_DIR: tempDir() }),
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("PARLEY_PORT");
    expect(result.stderr).toContain("abc");
  });

  it("mints tokens with `parley token create` that the server accepts", async () => {
    const dataDir = tempDir();
    const server = await spawnServer({ env: { PARLEY_DATA_DIR: dataDir } });
    const minted = spawnSync(
      process.execPath,
      [CLI, "token", "create", "--role", "bot", "--subject", "ci-bot", "--ttl", "1h"],
      {
        env: cleanEnv({ PARLEY_DATA_DIR: dataDir }),
        encoding: "utf8",
        timeout: 20_000,
      },
    );
    expect(minted.status, minted.stderr).toBe(0);
    const token = minted.stdout.trim();
    expect(token.split(".")).toHaveLength(3);
    // A bot token is valid but not an admin: 403, not 401.
    const res = await fetch(`${server.url}/api/admin/users`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(403);

    const wrongRole = spawnSync(
      process.execPath,
      [CLI, "token", "create", "--role", "admin", "--subject", "ci-bot"],
      {
        env: cleanEnv({ PARLEY_DATA_DIR: dataDir }),
        encoding: "utf8",
        timeout: 20_000,
      },
    );
    expect(wrongRole.status).toBe(1);
    expect(wrongRole.stderr).toContain("has the role bot");
  });
});
