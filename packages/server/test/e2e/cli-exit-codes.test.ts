import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SQLITE } from "../helpers/dialects.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";
import { runCli as parley } from "../helpers/run-cli.js";
import { startClientApp, type ClientApp } from "../integration/client/client-app.js";

/** `{"error": {"code", "message"}}`, the one line `--json` prints for a failure. */
function jsonError(stdout: string): { code: string; message: string } {
  const parsed = JSON.parse(stdout) as { error: { code: string; message: string } };
  expect(Object.keys(parsed)).toEqual(["error"]);
  expect(Object.keys(parsed.error).sort()).toEqual(["code", "message"]);
  return parsed.error;
}

describe("parley's exit codes by cause, and --json errors", () => {
  let c: ClientApp;
  let env: Record<string, string>;
  let broken: Receiver;
  beforeAll(async () => {
    c = await startClientApp(SQLITE);
    env = { PARLEY_URL: c.baseUrl, PARLEY_TOKEN: c.t.admin.token };
    // A server in trouble: every API call answers 503 with a problem document.
    broken = await startReceiver();
    broken.respondWith(() => ({
      status: 503,
      headers: { "content-type": "application/problem+json" },
      body: JSON.stringify({
        type: "about:blank",
        title: "Service Unavailable",
        status: 503,
        code: "database_unavailable",
        detail: "the database did not answer in time",
      }),
    }));
  });
  afterAll(async () => {
    await broken?.close();
    await c?.close();
  });

  const SPAWNS = 90_000;

  it(
    "exits 2 for commander's own refusals, with a JSON error and no help under --json",
    async () => {
      const unknownFlag = await parley(["webhooks", "list", "--colour"], env);
      expect(unknownFlag.code).toBe(2);
      expect(unknownFlag.stderr).toContain("error: unknown option '--colour'");

      const missing = await parley(["inbound", "create", "--name", "x"], env);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain("required option '--room <id>' not specified");

      const unknownCommand = await parley(["webhoks", "list"], env);
      expect(unknownCommand.code).toBe(2);
      expect(unknownCommand.stderr).toContain("unknown command 'webhoks'");

      const bareGroup = await parley(["webhooks"], env);
      expect(bareGroup.code).toBe(2);
      expect(bareGroup.stderr).toContain("Usage: parley webhooks");

      const json = await parley(["webhooks", "delete", "--json"], env);
      expect(json.code).toBe(2);
      expect(json.stderr).toBe("");
      expect(jsonError(json.stdout)).toEqual({
        code: "usage",
        message: "missing required argument 'id'",
      });
    },
    SPAWNS,
  );

  it(
    "exits 0 for help and the version, and --help lists the exit codes",
    async () => {
      const help = await parley(["--help"], {});
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/^Exit codes:$/m);
      expect(help.stdout).toMatch(/^ {2}3 {2}not found: the API answered 404$/m);
      expect(help.stdout).toMatch(/^ {2}5 {2}server or network: /m);
      const sub = await parley(["webhooks", "create", "--help"], {});
      expect(sub.code).toBe(0);
      expect(sub.stdout).toContain("exit codes: see parley --help");
    },
    SPAWNS,
  );

  it(
    "exits 2 for a bad value the CLI checks itself, before any request",
    async () => {
      const badId = await parley(["webhooks", "health", "seven", "--json"], {
        ...env,
        PARLEY_URL: "http://127.0.0.1:1", // never asked: the id is refused first
      });
      expect(badId.code).toBe(2);
      expect(jsonError(badId.stdout)).toEqual({
        code: "usage",
        message: 'webhook id must be a positive integer, got "seven"',
      });
      const noToken = await parley(["inbound", "list", "--json"], { PARLEY_URL: c.baseUrl });
      expect(noToken.code).toBe(2);
      expect(jsonError(noToken.stdout).message).toMatch(/^PARLEY_TOKEN is not set/);
    },
    SPAWNS,
  );

  it(
    "exits 3 when the API answers 404, with the API's code under --json",
    async () => {
      const text = await parley(["webhooks", "health", "999999"], env);
      expect(text.code).toBe(3);
      expect(text.stdout).toBe("");
      expect(text.stderr).toMatch(/^parley: not_found: .+\n$/);
      const json = await parley(["webhooks", "health", "999999", "--json"], env);
      expect(json.code).toBe(3);
      expect(json.stderr).toBe("");
      expect(jsonError(json.stdout)).toEqual({
        code: "not_found",
        message: expect.stringMatching(/^not_found: /),
      });
    },
    SPAWNS,
  );

  it(
    "exits 4 when the API refuses: invalid input, a bad token, a role without the right",
    async () => {
      const invalid = await parley(
        [
          "webhooks",
          "create",
          "--name",
          "x",
          "--url",
          "ftp://example.com/hook",
          "--events",
          "ROOM_CREATED",
          "--json",
        ],
        env,
      );
      expect(invalid.code).toBe(4);
      expect(jsonError(invalid.stdout).code).toBe("url_scheme_not_allowed");

      const badToken = await parley(["webhooks", "list", "--json"], {
        PARLEY_URL: c.baseUrl,
        PARLEY_TOKEN: "not-a-token",
      });
      expect(badToken.code).toBe(4);
      expect(jsonError(badToken.stdout).code).toBe("unauthorized");
      expect(badToken.stdout).not.toContain("not-a-token");

      const user = await c.t.user("user");
      const notAdmin = await parley(["webhooks", "list"], {
        PARLEY_URL: c.baseUrl,
        PARLEY_TOKEN: user.token,
      });
      expect(notAdmin.code).toBe(4);
      expect(notAdmin.stderr).toMatch(/^parley: forbidden: /);
    },
    SPAWNS,
  );

  it(
    "exits 5 when the server fails or cannot be reached",
    async () => {
      const failing = await parley(["webhooks", "list", "--json"], {
        PARLEY_URL: broken.origin,
        PARLEY_TOKEN: "x",
      });
      expect(failing.code).toBe(5);
      expect(jsonError(failing.stdout)).toEqual({
        code: "database_unavailable",
        message: "database_unavailable: the database did not answer in time",
      });

      const closed = await startReceiver();
      await closed.close();
      const down = await parley(["webhooks", "list"], {
        PARLEY_URL: closed.origin,
        PARLEY_TOKEN: "x",
      });
      expect(down.code).toBe(5);
      expect(down.stderr).toBe(
        `parley: cannot reach ${closed.origin}: fetch failed (ECONNREFUSED)\n`,
      );
      const downJson = await parley(["inbound", "list", "--json"], {
        PARLEY_URL: closed.origin,
        PARLEY_TOKEN: "x",
      });
      expect(downJson.code).toBe(5);
      expect(jsonError(downJson.stdout).code).toBe("unreachable");
    },
    SPAWNS,
  );
});
