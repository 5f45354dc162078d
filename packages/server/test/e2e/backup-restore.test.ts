import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { killAllServers, spawnServer, type SpawnedServer } from "../helpers/spawn-server.js";

const dirs: string[] = [];

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-backup-"));
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  await killAllServers();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

async function call(
  server: SpawnedServer,
  token: string,
  method: string,
  url: string,
  body?: unknown,
) {
  const res = await fetch(`${server.url}${url}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Every message of the room, by content. */
async function contents(
  server: SpawnedServer,
  token: string,
  roomId: number,
): Promise<Set<string>> {
  const found = new Set<string>();
  let cursor: string | null = null;
  do {
    const page = await call(
      server,
      token,
      "GET",
      `/api/rooms/${roomId}/messages?limit=100${cursor ? `&cursor=${cursor}` : ""}`,
    );
    expect(page.status).toBe(200);
    for (const item of page.body.items as Array<{ content: string }>) found.add(item.content);
    cursor = page.body.nextCursor as string | null;
  } while (cursor);
  return found;
}

describe("parley backup and parley restore (SQLite)", { tags: ["sqlite"] }, () => {
  it("a backup taken under write load, restored, holds every message acknowledged before it began", async () => {
    const dataDir = tempDir();
    const backupFile = path.join(tempDir(), "parley-backup.db");
    const server = await spawnServer({ env: { PARLEY_DATA_DIR: dataDir } });
    const token = server.adminToken!;
    const room = await call(server, token, "POST", "/api/rooms", { name: "backed-up" });
    expect(room.status).toBe(201);
    const roomId = room.body.id as number;

    // Writers post without pause, each message acknowledged (201) or not; acknowledged ones are
    // recorded with the time their answer arrived.
    const acknowledged: Array<{ content: string; at: number }> = [];
    let writing = true;
    let sent = 0;
    const writer = async (n: number) => {
      while (writing) {
        const content = `message ${n}-${sent++}`;
        const res = await call(server, token, "POST", `/api/rooms/${roomId}/messages`, {
          content,
        });
        if (res.status === 201) acknowledged.push({ content, at: Date.now() });
      }
    };
    const writers = [1, 2, 3, 4].map(writer);
    await expect
      .poll(() => acknowledged.length, { interval: 50, timeout: 20_000 })
      .toBeGreaterThan(200);

    const began = Date.now();
    const backup = await runCli(["backup", backupFile], { PARLEY_DATA_DIR: dataDir }, 60_000);
    const ended = Date.now();
    // The writers went on during the backup and go on after it.
    const duringBackup = acknowledged.filter((m) => m.at > began && m.at < ended).length;
    await expect
      .poll(() => acknowledged.filter((m) => m.at > ended).length, {
        interval: 50,
        timeout: 20_000,
      })
      .toBeGreaterThan(20);
    writing = false;
    await Promise.all(writers);
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stdout).toMatch(
      /^backed up \S+parley\.db to \S+parley-backup\.db \([\d.]+ MiB, \d+ ms, checked\)/,
    );
    expect(backup.stderr).toContain("not in the backup: the uploaded files");
    expect((fs.statSync(backupFile).mode & 0o777).toString(8)).toBe("600");

    // A restore refuses while the server has the database open.
    const refused = await runCli(["restore", backupFile], { PARLEY_DATA_DIR: dataDir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("is in use: stop every Parley process using it");

    expect(await server.kill("SIGTERM")).toBe(0);
    const restored = await runCli(["restore", backupFile], { PARLEY_DATA_DIR: dataDir });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toContain("the database it replaced is kept as");
    const kept = fs.readdirSync(dataDir).filter((name) => name.includes(".before-restore-"));
    expect(kept).toHaveLength(1);

    const again = await spawnServer({ env: { PARLEY_DATA_DIR: dataDir } });
    const found = await contents(again, token, roomId);
    const before = acknowledged.filter((m) => m.at < began);
    expect(before.length).toBeGreaterThan(200);
    expect(before.filter((m) => !found.has(m.content))).toEqual([]);
    // The database is the backup's, not the one it replaced: what was acknowledged after the
    // backup ended is not in it.
    const after = acknowledged.filter((m) => m.at > ended);
    expect(after.filter((m) => found.has(m.content))).toEqual([]);
    expect(found.size).toBeLessThan(acknowledged.length);
    console.log(
      `backup under load: ${before.length} messages before it, ${duringBackup} during its ${ended - began} ms, ${after.length} after; restored ${found.size}`,
    );
  });

  it("restore refuses a file that is not a Parley database, and backup refuses PostgreSQL", async () => {
    const dataDir = tempDir();
    const junk = path.join(dataDir, "junk.db");
    fs.writeFileSync(junk, "x".repeat(4096));
    const refused = await runCli(["restore", junk], { PARLEY_DATA_DIR: tempDir() });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^parley: cannot restore: \S+junk\.db is not a SQLite database/);

    const postgres = await runCli(["backup", path.join(dataDir, "b.db")], {
      DATABASE_URL: "postgres://parley@127.0.0.1:1/parley",
    });
    expect(postgres.code).toBe(1);
    expect(postgres.stderr).toContain("back up and restore PostgreSQL with its own tools (pg_dump");
  });
});
