import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

// Runs the BUILT command line (npm test builds first), the way an operator starts Parley.
const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../dist/cli.js");

const children: ChildProcessWithoutNullStreams[] = [];
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

/** Starts `parley serve` and resolves once it printed its address (and the admin token, if any). */
function serve(env: Record<string, string>): Promise<{
  child: ChildProcessWithoutNullStreams;
  address: string;
  token?: string;
  output: () => string;
}> {
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0"], { env: cleanEnv(env) });
  children.push(child);
  let out = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 20_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const address = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      const token = /Admin token: (\S+)/.exec(out)?.[1];
      const done =
        address &&
        (token || /API docs:/.test(out)) &&
        (token || !/Created the first admin/.test(out));
      if (done) {
        clearTimeout(timer);
        resolve({ child, address, ...(token ? { token } : {}), output: () => out });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => reject(new Error(`serve exited with ${code}:\n${out}`)));
  });
}

function exited(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.on("exit", (code) => resolve(code));
  });
}

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe("parley serve", () => {
  it("creates the admin on first start, prints a working token, and shuts down cleanly on SIGTERM", async () => {
    const dataDir = tempDir();
    const server = await serve({ PARLEY_DATA_DIR: dataDir });
    expect(server.token).toBeTruthy();
    expect(fs.existsSync(path.join(dataDir, "parley.db"))).toBe(true);

    const health = await fetch(`${server.address}/healthz`);
    expect(health.status).toBe(200);
    const users = await fetch(`${server.address}/api/admin/users`, {
      headers: { authorization: `Bearer ${server.token}` },
    });
    expect(users.status).toBe(200);
    const body = (await users.json()) as { items: Array<{ username: string; role: string }> };
    expect(body.items).toContainEqual(
      expect.objectContaining({ username: "admin", role: "admin" }),
    );

    server.child.kill("SIGTERM");
    expect(await exited(server.child)).toBe(0);

    // Second start on the same data: no new admin, no token printed, the old token still works.
    const again = await serve({ PARLEY_DATA_DIR: dataDir });
    expect(again.token).toBeUndefined();
    const still = await fetch(`${again.address}/api/admin/users`, {
      headers: { authorization: `Bearer ${server.token}` },
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
    const server = await serve({ PARLEY_DATA_DIR: dataDir });
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
    const res = await fetch(`${server.address}/api/admin/users`, {
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
