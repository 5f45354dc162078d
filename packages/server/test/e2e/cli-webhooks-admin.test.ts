import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../helpers/dialects.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";
import { startClientApp, type ClientApp } from "../integration/client/client-app.js";

// The BUILT command line (npm test builds first), run as an operator runs it.
const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../dist/cli.js");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function parley(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe("parley webhooks and parley inbound, against a running server", () => {
  let c: ClientApp;
  let receiver: Receiver;
  let env: Record<string, string>;
  beforeAll(async () => {
    c = await startClientApp(DIALECTS[0]!, { deliveries: true });
    receiver = await startReceiver();
    env = { PARLEY_URL: c.baseUrl, PARLEY_TOKEN: c.t.admin.token };
  });
  afterAll(async () => {
    await receiver?.close();
    await c?.close();
  });

  // Each case starts several `parley` processes: give them room on a loaded machine.
  const SPAWNS = 90_000;

  it(
    "creates, lists, tests and shows the delivery log of an endpoint",
    async () => {
      const created = await parley(
        [
          "webhooks",
          "create",
          "--name",
          "cli",
          "--url",
          receiver.url,
          "--events",
          "MESSAGE_CREATED,ROOM_CREATED",
          "--events",
          "USER_JOINED_ROOM",
          "--json",
        ],
        env,
      );
      expect(created.stderr).toBe("");
      expect(created.code).toBe(0);
      const webhook = JSON.parse(created.stdout) as {
        id: number;
        events: string[];
        secret: string;
      };
      expect(webhook.events).toEqual(["MESSAGE_CREATED", "ROOM_CREATED", "USER_JOINED_ROOM"]);
      expect(webhook.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);

      const list = await parley(["webhooks", "list"], env);
      expect(list.code).toBe(0);
      const [heading, ...rows] = list.stdout.trim().split("\n");
      expect(heading).toMatch(/^ID\s+NAME\s+ENABLED\s+EVENTS\s+URL$/);
      expect(rows.some((row) => row.includes("cli") && row.includes(receiver.url))).toBe(true);

      const tested = await parley(["webhooks", "test", String(webhook.id), "--wait"], env);
      const deliveryId = /^Test delivery (\d+): SUCCESS \(answered 204, \d+ ms\)$/m.exec(
        tested.stdout,
      )?.[1];
      expect(deliveryId, tested.stdout + tested.stderr).toBeDefined();
      expect(tested.code).toBe(0);
      expect(receiver.requests.at(-1)!.body.toString()).toContain('"WEBHOOK_TEST"');

      const deliveries = await parley(["webhooks", "deliveries", String(webhook.id)], env);
      expect(deliveries.code).toBe(0);
      expect(deliveries.stdout).toMatch(
        /^ID\s+EVENT\s+STATUS\s+ATTEMPTS\s+LAST\s+CREATED\s+NEXT ATTEMPT$/m,
      );
      expect(deliveries.stdout).toMatch(/WEBHOOK_TEST\s+SUCCESS\s+1\s+204/);
      const one = await parley(["webhooks", "deliveries", String(webhook.id), deliveryId!], env);
      expect(one.stdout).toContain("WEBHOOK_TEST, SUCCESS after 1 attempt(s)");
      expect(one.stdout).toContain('"requestedBy":"admin"');
    },
    SPAWNS,
  );

  it(
    "creates and lists inbound webhooks, the URL shown once",
    async () => {
      const { data: room } = await c.admin("POST /api/rooms", { name: "cli-room" });
      const created = await parley(
        ["inbound", "create", "--room", String(room.id), "--name", "Deploy bot"],
        env,
      );
      expect(created.code).toBe(0);
      const url = /url: +(\S+)/.exec(created.stdout)![1]!;
      expect(url).toMatch(/\/api\/public\/webhooks\/ingest\/[A-Za-z0-9_-]{43}$/);
      const token = url.split("/").at(-1)!;

      const list = await parley(["inbound", "list", "--room", String(room.id)], env);
      expect(list.stdout).toMatch(/^ID\s+ROOM\s+NAME\s+ENABLED\s+TOKEN\s+CREATED$/m);
      expect(list.stdout).toContain("Deploy bot");
      expect(list.stdout).toContain(`…${token.slice(-8)}`);
      expect(list.stdout).not.toContain(token);
      const json = JSON.parse((await parley(["inbound", "list", "--json"], env)).stdout) as Array<{
        displayName: string;
      }>;
      expect(json.map((h) => h.displayName)).toContain("Deploy bot");
    },
    SPAWNS,
  );

  it(
    "prints an API error as parley: <code>: <detail> and exits 1, the secret kept out",
    async () => {
      const bad = await parley(
        [
          "webhooks",
          "create",
          "--name",
          "x",
          "--url",
          receiver.url,
          "--events",
          "MESSAGE_CREATED",
          "--secret",
          "short-secret",
        ],
        env,
      );
      expect(bad.code).toBe(1);
      expect(bad.stdout).toBe("");
      expect(bad.stderr).toMatch(/^parley: invalid_secret: .+\n$/);
      expect(bad.stderr).not.toContain("short-secret");

      const missing = await parley(["webhooks", "test", "999999"], env);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/^parley: not_found: /);
    },
    SPAWNS,
  );

  it(
    "explains a missing token, a bad token and an unreachable server",
    async () => {
      const noToken = await parley(["webhooks", "list"], { PARLEY_URL: c.baseUrl });
      expect(noToken.code).toBe(1);
      expect(noToken.stderr).toContain("parley: PARLEY_TOKEN is not set");

      const badToken = await parley(["inbound", "list"], {
        PARLEY_URL: c.baseUrl,
        PARLEY_TOKEN: "not-a-jwt",
      });
      expect(badToken.code).toBe(1);
      expect(badToken.stderr).toMatch(/^parley: unauthorized: /);
      expect(badToken.stderr).not.toContain("not-a-jwt");

      const closed = await startReceiver();
      await closed.close();
      const down = await parley(["webhooks", "list"], {
        PARLEY_URL: closed.origin,
        PARLEY_TOKEN: "x",
      });
      expect(down.code).toBe(1);
      expect(down.stderr).toBe(
        `parley: cannot reach ${closed.origin}: fetch failed (ECONNREFUSED)\n`,
      );
    },
    SPAWNS,
  );
});
