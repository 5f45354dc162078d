import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, TEST_MASTER_KEY, type TestApp } from "../helpers/build-app.js";
import { describeEachDialect, type TestDatabase } from "../helpers/dialects.js";
import { CLI, cliEnv, type CliRun } from "../helpers/run-cli.js";

/** `parley <args>` with `input` on its standard input (not a terminal). */
function runCliWithInput(
  args: string[],
  env: Record<string, string>,
  input: string,
): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { env: cliEnv(env), timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin!.end(input);
  });
}

describeEachDialect("parley users on $name", (dialect) => {
  let dataDir: string;
  let shared: TestDatabase;
  let t: TestApp;
  let env: Record<string, string>;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-cli-users-"));
    shared = await dialect.open(
      dialect.name === "sqlite" ? { sqlitePath: path.join(dataDir, "parley.db") } : {},
    );
    // The server's app on the same database the commands open.
    t = await createTestApp({
      name: dialect.name,
      open: async () => ({ ...shared, cleanup: async () => {} }),
    });
    env = { PARLEY_DATA_DIR: dataDir, PARLEY_MASTER_KEY: TEST_MASTER_KEY, ...shared.env };
  });
  afterAll(async () => {
    await t?.close();
    await shared?.database.close().catch(() => undefined);
    await shared?.cleanup().catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const login = (username: string, password: string) =>
    t.app.inject({ method: "POST", url: "/api/auth/login", payload: { username, password } });

  it("set-password reads the password from stdin and the user signs in with it", async () => {
    expect((await login("admin", "a password from stdin")).statusCode).toBe(401);
    const run = await runCliWithInput(
      ["users", "set-password", "admin"],
      env,
      "a password from stdin\n",
    );
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("password set for admin\n");
    expect((await login("admin", "a password from stdin")).statusCode).toBe(200);
  });

  it("set-password refuses a short password and an unknown user", async () => {
    const short = await runCliWithInput(["users", "set-password", "admin"], env, "short\n");
    expect(short.code).toBe(1);
    expect(short.stderr).toContain("10 to 1024 characters");
    const unknown = await runCliWithInput(
      ["users", "set-password", "nobody"],
      env,
      "long enough password\n",
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no user "nobody"');
  });

  it("invite prints a link that creates the user with the role and name given", async () => {
    const run = await runCliWithInput(
      [
        "users",
        "invite",
        "--role",
        "bot",
        "--display-name",
        "Build bot",
        "--public-base-url",
        "https://chat.example.com",
      ],
      env,
      "",
    );
    expect(run.code, run.stderr).toBe(0);
    const url = run.stdout.trim();
    expect(url).toMatch(/^https:\/\/chat\.example\.com\/app\/#invite=[A-Za-z0-9_-]{43}$/);
    const res = await t.app.inject({
      method: "POST",
      url: "/api/auth/accept-invite",
      payload: {
        token: url.split("#invite=")[1],
        username: "builder",
        password: "a long password",
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().user).toMatchObject({
      username: "builder",
      displayName: "Build bot",
      role: "bot",
    });
  });

  it("refuses an unknown role with the usage status, 2", async () => {
    const run = await runCliWithInput(["users", "invite", "--role", "owner"], env, "");
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--role must be admin, bot or user");
  });
});
