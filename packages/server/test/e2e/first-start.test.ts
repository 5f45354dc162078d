import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { TEST_DATABASE_URL } from "../helpers/dialects.js";
import { CLI, cliEnv } from "../helpers/run-cli.js";
import { killAllServers, spawnServer, type SpawnedServer } from "../helpers/spawn-server.js";

const dirs: string[] = [];

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-first-start-"));
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  await killAllServers();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** What two processes started at the same moment on one empty database made of it. */
async function startTwoAtOnce(env: Record<string, string>): Promise<SpawnedServer[]> {
  // Both wait for the start lock's turn; on a busy machine the second one waits a while.
  return Promise.all([
    spawnServer({ env, startTimeoutMs: 60_000 }),
    spawnServer({ env, startTimeoutMs: 60_000 }),
  ]);
}

async function expectBothServeOneAdmin(servers: SpawnedServer[]): Promise<string> {
  const tokens = servers.map((server) => server.adminToken).filter((token) => token);
  expect(tokens, servers.map((server) => server.output()).join("\n----\n")).toHaveLength(1);
  const printed = servers.map((server) => server.output().match(/^Admin token: /gm)?.length ?? 0);
  expect(printed.reduce((a, b) => a + b)).toBe(1);
  for (const server of servers) {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    // The one token works on both: they share the users and the keys.
    const users = await fetch(`${server.url}/api/admin/users`, {
      headers: { authorization: `Bearer ${tokens[0]}` },
    });
    expect(users.status).toBe(200);
    const body = (await users.json()) as { items: Array<{ username: string; role: string }> };
    expect(body.items.filter((user) => user.role === "admin")).toEqual([
      expect.objectContaining({ username: "admin" }),
    ]);
  }
  return tokens[0]!;
}

describe(
  "two processes starting at once on an empty PostgreSQL database",
  { tags: ["postgres"] },
  () => {
    it(
      "both serve, exactly one admin exists, and its token is printed once",
      { timeout: 150_000 },
      async () => {
        const database = `parley_first_start_${crypto.randomBytes(4).toString("hex")}`;
        const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await admin.connect();
        await admin.query(`CREATE DATABASE ${database}`);
        try {
          const url = new URL(TEST_DATABASE_URL!);
          url.pathname = `/${database}`;
          const servers = await startTwoAtOnce({ DATABASE_URL: url.toString() });
          await expectBothServeOneAdmin(servers);

          const check = new pg.Client({ connectionString: url.toString() });
          await check.connect();
          try {
            const { rows } = await check.query<{ count: string }>("SELECT count(*) FROM users");
            expect(Number(rows[0]!.count)).toBe(1);
          } finally {
            await check.end();
          }
          for (const server of servers) expect(await server.kill("SIGTERM")).toBe(0);
        } finally {
          await killAllServers();
          await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
          await admin.end();
        }
      },
    );
  },
);

describe(
  "two processes starting at once on an empty SQLite data directory",
  { tags: ["sqlite"] },
  () => {
    it(
      "both serve, exactly one admin exists, and its token is printed once",
      { timeout: 150_000 },
      async () => {
        const servers = await startTwoAtOnce({ PARLEY_DATA_DIR: tempDir() });
        await expectBothServeOneAdmin(servers);
      },
    );
  },
);

describe("what a start prints", () => {
  it("ends with the banner holding the token; requests are not logged at the default level", async () => {
    const server = await spawnServer({
      env: { PARLEY_DATA_DIR: tempDir(), PARLEY_LOG_LEVEL: "info" },
    });
    expect(server.adminToken).toBeTruthy();
    for (let i = 0; i < 5; i++) await (await fetch(`${server.url}/healthz`)).text();
    await (await fetch(`${server.url}/no-such-page`)).text();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const lines = server.output().trimEnd().split("\n");
    expect(lines.at(-1)).toBe(`Admin token: ${server.adminToken}`);
    expect(lines.at(-5)).toMatch(/^Parley is listening on http:\/\//);
    expect(server.output()).not.toContain("incoming request");
    expect(server.output()).not.toContain("request completed");
  });

  it("logs each request at debug when asked", async () => {
    const server = await spawnServer({
      env: { PARLEY_DATA_DIR: tempDir(), PARLEY_LOG_LEVEL: "debug" },
    });
    await (await fetch(`${server.url}/healthz`)).text();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const completed = server
      .output()
      .split("\n")
      .filter((line) => line.includes('"msg":"request completed"'))
      .map((line) => JSON.parse(line) as { level: number; res: { statusCode: number } });
    expect(completed).toContainEqual(
      expect.objectContaining({ level: 20, res: { statusCode: 200 } }),
    );
  });

  it("warns, before the banner, of each setting that weakens a guard, and of none by default", async () => {
    const weakened = await spawnServer({
      env: {
        PARLEY_DATA_DIR: tempDir(),
        PARLEY_WEBHOOK_ALLOW_HTTP: "true",
        PARLEY_WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
        PARLEY_STREAM_MAX_SOCKETS_PER_ADDRESS: "0",
      },
    });
    const warnings = weakened
      .output()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .filter((entry) => entry.level === 40)
      .map((entry) => entry.msg);
    expect(warnings).toEqual([
      expect.stringMatching(/^PARLEY_WEBHOOK_ALLOW_PRIVATE_NETWORKS=true turns the SSRF guard off/),
      expect.stringMatching(/^PARLEY_WEBHOOK_ALLOW_HTTP=true: endpoint URLs may be http:\/\//),
      expect.stringMatching(/^PARLEY_STREAM_MAX_SOCKETS_PER_ADDRESS=0/),
    ]);
    expect(weakened.output().indexOf("SSRF")).toBeLessThan(
      weakened.output().indexOf("Parley is listening"),
    );

    const guarded = await spawnServer({
      env: {
        PARLEY_DATA_DIR: tempDir(),
        PARLEY_WEBHOOK_ALLOW_HTTP: "false",
        PARLEY_WEBHOOK_ALLOW_PRIVATE_NETWORKS: "false",
      },
    });
    expect(guarded.output()).not.toContain('"level":40');
  });

  it("prints readable log lines, not JSON, when its output is a terminal", async () => {
    // `script` runs the command on a pseudo-terminal, as a person at a shell runs it.
    const dataDir = tempDir();
    const command = `exec ${process.execPath} ${CLI} serve`;
    const child = spawn("script", ["-qfec", command, "/dev/null"], {
      env: cliEnv({
        PARLEY_DATA_DIR: dataDir,
        PARLEY_PORT: "0",
        PARLEY_WEBHOOK_ALLOW_HTTP: "true",
        TERM: "dumb",
      }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    try {
      await expect
        .poll(() => /^Admin token: /m.test(output), { interval: 100, timeout: 30_000 })
        .toBe(true);
    } finally {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    // eslint-disable-next-line no-control-regex
    const plain = output.replace(/\u001b\[[0-9;]*m/g, "").replace(/\r/g, "");
    expect(plain).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: PARLEY_WEBHOOK_ALLOW_HTTP=true/m);
    expect(plain).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: Server listening at /m);
    expect(plain).not.toContain('{"level"');
  });
});
