import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import SQLite from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { TEST_DATABASE_URL } from "../helpers/dialects.js";
import { runCli } from "../helpers/run-cli.js";

const dirs: string[] = [];

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-start-errors-"));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** `parley serve` that is expected to fail: its exit code and the one line it printed. */
async function failedStart(env: Record<string, string>) {
  const result = await runCli(["serve"], { PARLEY_PORT: "0", ...env }, 30_000);
  return { code: result.code, stderr: result.stderr.trim(), stdout: result.stdout };
}

describe("start-up errors in plain words", () => {
  it("a port in use names the port and the setting", async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const result = await failedStart({ PARLEY_DATA_DIR: tempDir(), PARLEY_PORT: String(port) });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `parley: could not start: port ${port} on 127.0.0.1 is already in use (another Parley, ` +
          `or another program): stop it, or choose another port with PARLEY_PORT or --port`,
      );
      expect(result.stdout).not.toContain("Admin token");
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it("a data directory that cannot be written names the directory and why", async () => {
    const file = path.join(tempDir(), "a-file");
    fs.writeFileSync(file, "");
    const result = await failedStart({ PARLEY_DATA_DIR: path.join(file, "data") });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `parley: could not start: cannot write to the data directory ${path.join(file, "data")}: ` +
        "part of the path is a file, not a directory",
    );
    expect(result.stderr).toContain("PARLEY_DATA_DIR");
  });

  it("a database file that is not a database says so and points at restoring", async () => {
    const dataDir = tempDir();
    fs.writeFileSync(path.join(dataDir, "parley.db"), "not a database, ".repeat(512));
    const result = await failedStart({ PARLEY_DATA_DIR: dataDir });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^parley: could not start: \S+parley\.db is not a readable SQLite database \(.+\): restore it from a backup/,
    );
  });

  it("a database migrated by a newer version says which migration and what to do", async () => {
    const dataDir = tempDir();
    expect((await runCli(["migrate"], { PARLEY_DATA_DIR: dataDir })).code).toBe(0);
    const sqlite = new SQLite(path.join(dataDir, "parley.db"));
    sqlite
      .prepare("INSERT INTO parley_migrations (name, timestamp) VALUES (?, ?)")
      .run("999-from-the-future", new Date().toISOString());
    sqlite.close();
    const result = await failedStart({ PARLEY_DATA_DIR: dataDir });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      "parley: could not start: the database was migrated by a newer version of Parley (it has " +
        "migration 999-from-the-future, which this version does not know): run that version or a " +
        "newer one, or restore a backup taken before the upgrade (docs/deployment.md#upgrades)",
    );
  });

  it("a DATABASE_URL where nothing listens names the address", async () => {
    const result = await failedStart({
      DATABASE_URL: "postgres://parley:secret@127.0.0.1:1/parley",
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      "parley: could not start: nothing accepts connections at 127.0.0.1:1, where DATABASE_URL " +
        "points: is PostgreSQL running, on that host and port?",
    );
    expect(result.stderr).not.toContain("secret");
  });

  it(
    "a DATABASE_URL naming no database says how to create it",
    { tags: ["postgres"] },
    async () => {
      const url = new URL(TEST_DATABASE_URL!);
      url.pathname = "/parley_no_such_database";
      const result = await failedStart({
        DATABASE_URL: url.toString(),
        PARLEY_MASTER_KEY: "7e57".repeat(16),
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `parley: could not start: the database "parley_no_such_database" does not exist on ` +
          `${url.hostname}:${url.port || "5432"}: create it (createdb parley_no_such_database) or ` +
          `correct DATABASE_URL`,
      );
    },
  );
});
