import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load-config.js";
import { startServer, type RunningServer } from "../../../src/server.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Every file and directory under `dir` (itself included) with its permission bits. */
function modes(dir: string): [string, number][] {
  const out: [string, number][] = [[".", fs.statSync(dir).mode & 0o777]];
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath, entry.name);
    out.push([path.relative(dir, full), fs.statSync(full).mode & 0o777]);
  }
  return out;
}

describe("the data directory", () => {
  it("is created 0700 with every file in it 0600, uploads included", async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), "parley-modes-"));
    cleanups.push(() => fs.rmSync(parent, { recursive: true, force: true }));
    const dataDir = path.join(parent, "data");
    // The usual umask leaves new files readable by everyone unless Parley says otherwise.
    const umask = process.umask(0o022);
    cleanups.push(() => void process.umask(umask));
    let server: RunningServer | undefined;
    let token = "";
    server = await startServer(
      loadConfig({}, { dataDir, port: 0, logLevel: "silent" }),
      (banner) => {
        token = /Admin token: (\S+)/.exec(banner)![1]!;
      },
    );
    cleanups.push(() => server?.close());
    const headers = { authorization: `Bearer ${token}` };
    const room = await fetch(`${server.address}/api/rooms`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ name: "files" }),
    });
    const form = new FormData();
    form.append("file", new Blob(["hello"]), "hello.txt");
    const upload = await fetch(`${server.address}/api/rooms/${(await room.json()).id}/files`, {
      method: "POST",
      headers,
      body: form,
    });
    expect(upload.status).toBe(201);

    // While it runs (the WAL files exist), and after it stopped.
    for (const expected of [["parley.db-wal", "parley.db-shm"], []]) {
      const found = modes(dataDir);
      expect(found.map(([name]) => name)).toEqual(
        expect.arrayContaining([
          ".",
          "parley.db",
          "jwt-secret",
          "secret-key",
          "files",
          ...expected,
        ]),
      );
      for (const [name, mode] of found) {
        const isDir = fs.statSync(path.join(dataDir, name)).isDirectory();
        expect(mode.toString(8), name).toBe(isDir ? "700" : "600");
      }
      await server?.close();
      server = undefined;
    }
  });
});
