import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SQLITE } from "../helpers/dialects.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";
import { CLI, cliEnv, runCli as parley, type CliRun } from "../helpers/run-cli.js";
import { startClientApp, type ClientApp } from "../integration/client/client-app.js";

/** `parley <args>` with `input` on its stdin. */
function parleyWithInput(
  args: string[],
  env: Record<string, string>,
  input: string,
): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { env: cliEnv(env), timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin!.end(input);
  });
}

describe("parley webhooks create|update: every endpoint setting as a flag or --from-file", () => {
  let c: ClientApp;
  let receiver: Receiver;
  let env: Record<string, string>;
  let dir: string;
  let general: number;
  let ops: number;
  beforeAll(async () => {
    c = await startClientApp(SQLITE);
    receiver = await startReceiver();
    env = { PARLEY_URL: c.baseUrl, PARLEY_TOKEN: c.t.admin.token };
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-cli-settings-"));
    general = (await c.admin("POST /api/rooms", { name: "General" })).data.id;
    ops = (await c.admin("POST /api/rooms", { name: "ops", visibility: "private" })).data.id;
  });
  afterAll(async () => {
    await receiver?.close();
    await c?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const SPAWNS = 90_000;

  it(
    "creates an endpoint with every setting from flags, wildcards and room names included, then changes and clears them",
    async () => {
      const created = await parley(
        [
          "webhooks",
          "create",
          "--name",
          "all flags",
          "--url",
          receiver.url,
          "--events",
          "message_*,ROOM_CREATED",
          "--events",
          "MESSAGE_*",
          "--scheme",
          "standard-webhooks",
          "--rooms",
          "#general,ops", // by name, a private room too
          "--rooms",
          String(general), // by id (given twice: kept once)
          "--header",
          "X-Team: billing",
          "--header",
          "X-Tenant:  acme-corp-0042 ",
          "--rate-limit",
          "20",
          "--ordering",
          "room",
          "--payload-format",
          "cloudevents",
          "--trace-context",
        ],
        env,
      );
      expect(created.stderr).toBe("");
      expect(created.code).toBe(0);
      const id = Number(/^Created webhook (\d+) "all flags" -> /.exec(created.stdout)?.[1]);
      expect(created.stdout).toContain("  events: MESSAGE_*, ROOM_CREATED\n");
      expect(created.stdout).toContain("  signature scheme: standard-webhooks\n");
      expect(created.stdout).toContain(`  rooms: ${general}, ${ops}\n`);
      expect(created.stdout).toMatch(/^ {2}headers: x-team: \*+ng; x-tenant: \*+0042$/m);
      expect(created.stdout).not.toContain("acme-corp");
      expect(created.stdout).toContain("  rate limit: 20 per second\n");
      expect(created.stdout).toContain("  ordering: room\n");
      expect(created.stdout).toContain("  payload format: cloudevents\n");
      expect(created.stdout).toContain("  trace context: sent (traceparent)\n");
      expect(created.stdout).toMatch(/^ {2}secret: whsec_\S+$/m);

      const { data: stored } = await c.admin("GET /api/admin/webhooks/{id}", { id });
      expect(stored).toMatchObject({
        events: ["MESSAGE_*", "ROOM_CREATED"],
        signatureScheme: "standard-webhooks",
        roomIds: [general, ops],
        maxDeliveriesPerSecond: 20,
        ordering: "room",
        payloadFormat: "cloudevents",
        traceContext: true,
        enabled: true,
      });
      expect(Object.keys(stored.headers).sort()).toEqual(["x-team", "x-tenant"]);
      expect(stored.headers["x-tenant"]).toMatch(/^\*+0042$/);

      const updated = await parley(
        [
          "webhooks",
          "update",
          String(id),
          "--events",
          "*",
          "--scheme",
          "both",
          "--rooms",
          "all",
          "--clear-headers",
          "--rate-limit",
          "none",
          "--payload-format",
          "PARLEY",
          "--no-trace-context",
          "--json",
        ],
        env,
      );
      expect(updated.stderr).toBe("");
      expect(updated.code).toBe(0);
      expect(JSON.parse(updated.stdout)).toMatchObject({
        id,
        events: ["*"],
        signatureScheme: "both",
        roomIds: null,
        headers: {},
        maxDeliveriesPerSecond: null,
        ordering: "room",
        payloadFormat: "parley",
        traceContext: false,
      });
    },
    SPAWNS,
  );

  it(
    "prints the public key of an endpoint signing with ed25519",
    async () => {
      const created = await parley(
        [
          "webhooks",
          "create",
          "--name",
          "ed25519",
          "--url",
          receiver.url,
          "--events",
          "*",
          "--scheme",
          "standard-webhooks-ed25519",
        ],
        env,
      );
      expect(created.stderr).toBe("");
      const publicKey =
        /^ {2}public key: (whpk_\S+) \(receivers verify v1a signatures with it\)$/m.exec(
          created.stdout,
        )?.[1];
      const id = Number(/^Created webhook (\d+)/.exec(created.stdout)?.[1]);
      const { data: stored } = await c.admin("GET /api/admin/webhooks/{id}", { id });
      expect(publicKey).toBe(stored.publicKey);
    },
    SPAWNS,
  );

  it(
    "creates from --from-file (a path or stdin), flags winning over the file, and updates from one",
    async () => {
      const file = path.join(dir, "endpoint.json");
      fs.writeFileSync(
        file,
        JSON.stringify({
          name: "from the file",
          url: receiver.url,
          secret: "a-secret-kept-in-the-file",
          events: ["ROOM_*"],
          signatureScheme: "both",
          roomIds: [general],
          headers: { "X-From": "file-value-1234" },
          maxDeliveriesPerSecond: 5,
          ordering: "endpoint",
          payloadFormat: "cloudevents-binary",
          traceContext: true,
          enabled: false,
        }),
      );
      const created = await parley(
        ["webhooks", "create", "--from-file", file, "--name", "the flag's name", "--json"],
        env,
      );
      expect(created.stderr).toBe("");
      expect(created.code).toBe(0);
      const webhook = JSON.parse(created.stdout) as Record<string, unknown> & { id: number };
      expect(webhook).toMatchObject({
        name: "the flag's name",
        events: ["ROOM_*"],
        signatureScheme: "both",
        roomIds: [general],
        maxDeliveriesPerSecond: 5,
        ordering: "endpoint",
        payloadFormat: "cloudevents-binary",
        traceContext: true,
        enabled: false,
      });
      // The file's secret is used, so none is generated or printed.
      expect(webhook).not.toHaveProperty("secret");
      expect(created.stdout).not.toContain("a-secret-kept-in-the-file");

      const fromStdin = await parleyWithInput(
        ["webhooks", "update", String(webhook.id), "--from-file", "-", "--enable", "--json"],
        env,
        JSON.stringify({ name: "from stdin", roomIds: null, headers: null }),
      );
      expect(fromStdin.stderr).toBe("");
      expect(JSON.parse(fromStdin.stdout)).toMatchObject({
        id: webhook.id,
        name: "from stdin",
        roomIds: null,
        headers: {},
        enabled: true,
        ordering: "endpoint",
      });
    },
    SPAWNS,
  );

  it(
    "refuses bad settings before calling (2), an unknown room name (3), and what the server refuses (4)",
    async () => {
      const base = ["webhooks", "create", "--name", "x", "--url", receiver.url];
      const cases: Array<[string[], number, RegExp]> = [
        [
          [...base, "--events", "NOTHING_*"],
          2,
          /^parley: --events: NOTHING_\* matches no event; a wildcard is \* or a prefix/,
        ],
        [
          [...base, "--events", "ROOM_CREATED", "--header", "no colon"],
          2,
          /^parley: --header must be "Name: value"/,
        ],
        [
          [...base, "--events", "ROOM_CREATED", "--rate-limit", "0"],
          2,
          /^parley: --rate-limit must be a whole number from 1 to 10000, or none/,
        ],
        [
          [...base, "--events", "ROOM_CREATED", "--scheme", "hmac"],
          2,
          /^parley: --scheme must be one of parley, standard-webhooks, both/,
        ],
        [
          [...base, "--events", "ROOM_CREATED", "--payload-format", "xml"],
          2,
          /^parley: --payload-format must be one of parley, cloudevents, cloudevents-binary/,
        ],
        [
          ["webhooks", "create", "--url", receiver.url],
          2,
          /^parley: --name, --events are required \(as a flag or in --from-file\)$/m,
        ],
        [
          [...base, "--events", "ROOM_CREATED", "--from-file", path.join(dir, "missing.json")],
          2,
          /^parley: --from-file: cannot read /,
        ],
        [
          [...base, "--events", "ROOM_CREATED", "--rooms", "no-such-room"],
          3,
          /^parley: --rooms: no room named "no-such-room"/,
        ],
        [
          [...base, "--events", "ROOM_CREATED", "--header", "Content-Type: text/plain"],
          4,
          /^parley: header_reserved: /,
        ],
      ];
      for (const [args, code, message] of cases) {
        const run = await parley(args, env);
        expect(run.stderr, args.join(" ")).toMatch(message);
        expect(run.code, args.join(" ")).toBe(code);
      }
      const notJson = path.join(dir, "not.json");
      fs.writeFileSync(notJson, "[1, 2]");
      const array = await parley(["webhooks", "create", "--from-file", notJson, "--json"], env);
      expect(array.code).toBe(2);
      expect(JSON.parse(array.stdout)).toEqual({
        error: {
          code: "usage",
          message: `--from-file: ${notJson} must hold a JSON object of endpoint fields`,
        },
      });
    },
    SPAWNS,
  );
});
