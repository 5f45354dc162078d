import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load-config.js";
import { startServer, type RunningServer } from "../../../src/server.js";

const dirs: string[] = [];
const servers: RunningServer[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

async function start(dataDir: string): Promise<string[]> {
  const printed: string[] = [];
  const config = loadConfig({}, { dataDir, port: 0, logLevel: "silent" });
  servers.push(await startServer(config, (text) => printed.push(text)));
  return printed;
}

describe("the start-up banner", () => {
  it("prints the address, the docs and the first admin's token in one write", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-banner-"));
    dirs.push(dataDir);
    const printed = await start(dataDir);
    // A reader that stops at the docs line must already have the token: one write, in this order.
    expect(printed).toHaveLength(1);
    const lines = printed[0]!.split("\n");
    expect(lines[0]).toMatch(/^Parley is listening on http:\/\/127\.0\.0\.1:\d+ \(SQLite in /);
    expect(lines.slice(1, 3)).toEqual([
      expect.stringMatching(/^Admin UI: http:\/\/127\.0\.0\.1:\d+\/admin\/$/),
      expect.stringMatching(/^API docs: http:\/\/127\.0\.0\.1:\d+\/docs$/),
    ]);
    expect(lines[4]).toMatch(/^Admin token: \S+\.\S+\.\S+$/);

    // Second start on the same data: the admin exists, no token is printed.
    await servers.pop()!.close();
    const again = await start(dataDir);
    expect(again).toHaveLength(1);
    expect(again[0]).toContain("API docs: ");
    expect(again[0]).not.toContain("Admin token:");
  });
});
