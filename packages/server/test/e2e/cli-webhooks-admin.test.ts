import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signWebhookPayload } from "@parley/client";
import { SQLITE } from "../helpers/dialects.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";
import { CLI, cliEnv, runCli as parley, type CliRun } from "../helpers/run-cli.js";
import { waitFor } from "../helpers/wait-for.js";
import { startClientApp, type ClientApp } from "../integration/client/client-app.js";

/** Runs `parley` under a pseudo-terminal (util-linux `script`), as an operator's shell does. */
function parleyInTerminal(args: string[], env: Record<string, string>): Promise<CliRun> {
  const command = [process.execPath, CLI, ...args].map((arg) => `'${arg}'`).join(" ");
  return new Promise((resolve) => {
    execFile(
      "script",
      ["-qec", command, "/dev/null"],
      {
        env: cliEnv({ TERM: "dumb", ...env }),
        timeout: 20_000,
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const HAS_SCRIPT = fs.existsSync("/usr/bin/script");
const SERVER_PACKAGE = JSON.parse(
  fs.readFileSync(path.resolve(path.dirname(CLI), "../package.json"), "utf8"),
) as { version: string };

describe("parley webhooks and parley inbound, against a running server", () => {
  let c: ClientApp;
  let receiver: Receiver;
  let env: Record<string, string>;
  beforeAll(async () => {
    c = await startClientApp(SQLITE, { deliveries: true });
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
      expect(webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

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
      const id = /Created inbound webhook (\d+)/.exec(created.stdout)![1]!;
      const printed = (label: string) =>
        new RegExp(`${label} url: +(\\S+)`).exec(created.stdout)?.[1];
      expect(printed("Slack")).toBe(`${url}/slack`);
      expect(printed("GitHub")).toBe(`${url}/github`);
      expect(printed("Stripe")).toBe(`${url}/stripe`);
      expect(printed("Discord")).toBe(
        `${new URL(url).origin}/api/public/discord/v10/webhooks/${id}/${token}`,
      );

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
    "lists endpoints with --json as an array of the documented webhook objects, no secret among them",
    async () => {
      const secret = "a-secret-the-list-must-not-show";
      const { data: made } = await c.admin("POST /api/admin/webhooks", {
        data: { name: "json-list", url: receiver.url, secret, events: ["ROOM_CREATED"] },
      });
      const list = await parley(["webhooks", "list", "--json"], env);
      expect(list.stderr).toBe("");
      expect(list.code).toBe(0);
      const webhooks = JSON.parse(list.stdout) as Array<Record<string, unknown>>;
      expect(Array.isArray(webhooks)).toBe(true);
      for (const webhook of webhooks) {
        expect(webhook).toMatchObject({
          id: expect.any(Number),
          name: expect.any(String),
          url: expect.any(String),
          events: expect.any(Array),
          enabled: expect.any(Boolean),
          createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        });
        expect(webhook).not.toHaveProperty("secret");
      }
      expect(webhooks.find((webhook) => webhook.id === made.id)).toMatchObject({
        name: "json-list",
        url: receiver.url,
        events: ["ROOM_CREATED"],
        enabled: true,
      });
      expect(list.stdout).not.toContain(secret);
    },
    SPAWNS,
  );

  it(
    "creates an inbound webhook with --json: the documented object with its token and URLs, which post into the room",
    async () => {
      const { data: room } = await c.admin("POST /api/rooms", { name: "cli-json-room" });
      const created = await parley(
        [
          "inbound",
          "create",
          "--room",
          String(room.id),
          "--name",
          "JSON bot",
          "--avatar-url",
          "https://example.com/bot.png",
          "--json",
        ],
        env,
      );
      expect(created.stderr).toBe("");
      expect(created.code).toBe(0);
      const hook = JSON.parse(created.stdout) as Record<string, unknown> & {
        token: string;
        url: string;
      };
      expect(hook).toEqual({
        id: expect.any(Number),
        roomId: room.id,
        displayName: "JSON bot",
        avatarUrl: "https://example.com/bot.png",
        enabled: true,
        allowOverrides: false,
        tokenLast8: hook.token.slice(-8),
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        // Built from the configured address (PARLEY_PUBLIC_BASE_URL, else host and PARLEY_PORT);
        // this server listens on a port of its own, so only the path is compared and used.
        url: expect.stringMatching(
          new RegExp(`^http://[^/]+/api/public/webhooks/ingest/${hook.token}$`),
        ),
        slackUrl: `${hook.url}/slack`,
        discordUrl: `${new URL(hook.url).origin}/api/public/discord/v10/webhooks/${String(hook.id)}/${hook.token}`,
        githubUrl: `${hook.url}/github`,
        stripeUrl: `${hook.url}/stripe`,
        signingSecretSet: false,
      });
      const posted = await fetch(`${c.baseUrl}${new URL(hook.url).pathname}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ content: "posted through the printed URL" }),
      });
      expect(posted.status).toBe(200);
      const { data: messages } = await c.admin("GET /api/rooms/{roomId}/messages", {
        roomId: room.id,
      });
      expect(
        messages.items.map((message) => ("content" in message ? message.content : null)),
      ).toContain("posted through the printed URL");
    },
    SPAWNS,
  );

  it(
    "prints an API error as parley: <code>: <detail>, exiting 4 when refused and 3 when not found, the secret kept out",
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
      expect(bad.code).toBe(4);
      expect(bad.stdout).toBe("");
      expect(bad.stderr).toMatch(/^parley: invalid_secret: .+\n$/);
      expect(bad.stderr).not.toContain("short-secret");

      const missing = await parley(["webhooks", "test", "999999"], env);
      expect(missing.code).toBe(3);
      expect(missing.stderr).toMatch(/^parley: not_found: /);
    },
    SPAWNS,
  );

  it(
    "explains a missing token (2), a bad token (4) and an unreachable server (5)",
    async () => {
      const noToken = await parley(["webhooks", "list"], { PARLEY_URL: c.baseUrl });
      expect(noToken.code).toBe(2);
      expect(noToken.stderr).toContain("parley: PARLEY_TOKEN is not set");

      const badToken = await parley(["inbound", "list"], {
        PARLEY_URL: c.baseUrl,
        PARLEY_TOKEN: "not-a-jwt",
      });
      expect(badToken.code).toBe(4);
      expect(badToken.stderr).toMatch(/^parley: unauthorized: /);
      expect(badToken.stderr).not.toContain("not-a-jwt");

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
    },
    SPAWNS,
  );

  it(
    "prints its version",
    async () => {
      for (const flag of ["--version", "-V"]) {
        const run = await parley([flag], {});
        expect(run.code).toBe(0);
        expect(run.stdout).toBe(`${SERVER_PACKAGE.version}\n`);
      }
    },
    SPAWNS,
  );

  it(
    "updates, redelivers and deletes an endpoint",
    async () => {
      const created = await parley(
        [
          "webhooks",
          "create",
          "--name",
          "before",
          "--url",
          receiver.url,
          "--events",
          "ROOM_CREATED",
          "--json",
        ],
        env,
      );
      const { id } = JSON.parse(created.stdout) as { id: number };

      const updated = await parley(
        [
          "webhooks",
          "update",
          String(id),
          "--name",
          "after",
          "--events",
          "MESSAGE_CREATED,ROOM_DELETED",
          "--disable",
          "--json",
        ],
        env,
      );
      expect(updated.stderr).toBe("");
      expect(JSON.parse(updated.stdout)).toMatchObject({
        id,
        name: "after",
        events: ["MESSAGE_CREATED", "ROOM_DELETED"],
        enabled: false,
      });
      const { data: stored } = await c.admin("GET /api/admin/webhooks/{id}", { id });
      expect(stored).toMatchObject({ name: "after", enabled: false });

      const human = await parley(
        ["webhooks", "update", String(id), "--enable", "--secret", "another-long-secret-value"],
        env,
      );
      expect(human.code).toBe(0);
      expect(human.stdout).toContain(`Updated webhook ${id} "after"`);
      expect(human.stdout).toContain("secret: replaced");
      expect(human.stdout).not.toContain("another-long-secret-value");

      const nothing = await parley(["webhooks", "update", String(id)], env);
      expect(nothing.code).toBe(2);
      expect(nothing.stderr).toMatch(/^parley: nothing to change/);

      // A failed delivery, then its redelivery succeeds; the receiver gets the same bytes twice.
      receiver.respondWith(() => ({ status: 500, body: "receiver is down for maintenance" }));
      const failed = await parley(["webhooks", "test", String(id), "--wait", "--json"], env);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toBe(""); // no spinner when stderr is not a terminal
      const first = JSON.parse(failed.stdout) as { id: number; status: string };
      expect(first.status).not.toBe("SUCCESS");
      const shown = await parley(["webhooks", "deliveries", String(id), String(first.id)], env);
      expect(shown.stdout).toMatch(/attempt 1 at \S+, \d+ ms: answered 500/);
      expect(shown.stdout).toContain("response body: receiver is down for maintenance");

      receiver.respondWith(() => ({ status: 204 }));
      const before = receiver.requests.length;
      const again = await parley(
        ["webhooks", "redeliver", String(id), String(first.id), "--wait"],
        env,
      );
      expect(again.stderr).toBe("");
      expect(again.stdout).toMatch(/^Redelivery (\d+): SUCCESS \(answered 204, \d+ ms\)$/m);
      expect(again.code).toBe(0);
      const sent = receiver.requests.slice(before - 1).map((r) => r.body.toString());
      expect(sent.at(-1)).toBe(sent[0]);

      const queued = await parley(
        ["webhooks", "redeliver", String(id), String(first.id), "--json"],
        env,
      );
      expect(JSON.parse(queued.stdout)).toEqual({ webhookId: id, deliveryId: expect.any(Number) });

      const deleted = await parley(["webhooks", "delete", String(id)], env);
      expect(deleted.code).toBe(0);
      expect(deleted.stdout).toContain(`Deleted webhook ${id}`);
      const gone = await parley(["webhooks", "delete", String(id), "--json"], env);
      expect(gone.code).toBe(3);
      expect(JSON.parse(gone.stdout)).toEqual({
        error: { code: "not_found", message: expect.stringMatching(/^not_found: /) },
      });
      expect(gone.stderr).toBe("");
    },
    SPAWNS,
  );

  it(
    "creates an ordered endpoint and changes its ordering, refusing an unknown one",
    async () => {
      const created = await parley(
        [
          "webhooks",
          "create",
          "--name",
          "ordered",
          "--url",
          receiver.url,
          "--events",
          "ROOM_CREATED",
          "--ordering",
          "room",
        ],
        env,
      );
      expect(created.stderr).toBe("");
      expect(created.stdout).toContain("  ordering: room");
      const id = Number(/Created webhook (\d+)/.exec(created.stdout)![1]);
      const { data: stored } = await c.admin("GET /api/admin/webhooks/{id}", { id });
      expect(stored).toMatchObject({ ordering: "room", heldLanes: [] });

      const updated = await parley(
        ["webhooks", "update", String(id), "--ordering", "Endpoint", "--json"],
        env,
      );
      expect(updated.stderr).toBe("");
      expect(JSON.parse(updated.stdout)).toMatchObject({ id, ordering: "endpoint" });

      const refused = await parley(["webhooks", "update", String(id), "--ordering", "fifo"], env);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/--ordering must be one of none, room, endpoint/);
      await parley(["webhooks", "delete", String(id)], env);
    },
    SPAWNS,
  );

  it(
    "lists allowed values for a bad enum, and takes one in any case",
    async () => {
      const { data: webhook } = await c.admin("POST /api/admin/webhooks", {
        data: {
          name: "enum",
          url: receiver.url,
          secret: "a-long-enough-secret",
          events: ["ROOM_CREATED"],
        },
      });
      const bad = await parley(
        ["webhooks", "deliveries", String(webhook.id), "--status", "done"],
        env,
      );
      expect(bad.code).toBe(2);
      expect(bad.stderr).toBe(
        'parley: --status must be one of PENDING, SUCCESS, FAILED, EXHAUSTED; got "done"\n',
      );
      const lower = await parley(
        ["webhooks", "deliveries", String(webhook.id), "--status", "success", "--json"],
        env,
      );
      expect(lower.code).toBe(0);
      expect(JSON.parse(lower.stdout)).toEqual([]);

      const badEvent = await parley(
        ["webhooks", "create", "--name", "x", "--url", receiver.url, "--events", "MESAGE_CREATED"],
        env,
      );
      expect(badEvent.code).toBe(2);
      expect(badEvent.stderr).toMatch(
        /^parley: --events must be one of MESSAGE_CREATED, .*; got "MESAGE_CREATED"\n$/,
      );

      const badSecret = await parley(["webhooks", "listen", "--port", "0", "--secret", "abc"], env);
      expect(badSecret.code).toBe(2);
      expect(badSecret.stderr).toMatch(/^parley: --secret must be 16 to 1024 characters/);
    },
    SPAWNS,
  );

  it(
    "fits tables to the terminal width and summarizes an endpoint's events",
    async () => {
      const { EVENT_NAMES } = await import("@parley/client");
      await c.admin("POST /api/admin/webhooks", {
        data: {
          name: "every event, with a long name that does not fit",
          url: `${receiver.url}/a/very/long/path/that/would/never/fit/in/eighty/columns/at/all`,
          secret: "a-long-enough-secret",
          events: [...EVENT_NAMES],
        },
      });
      const list = await parley(["webhooks", "list"], { ...env, COLUMNS: "80" });
      expect(list.code).toBe(0);
      const lines = list.stdout.trimEnd().split("\n");
      for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
      expect(list.stdout).toMatch(/every event.*…\s+yes\s+all\s+http.*…$/m);
      // Without a width (a pipe), cells are whole.
      const piped = await parley(["webhooks", "list"], env);
      expect(piped.stdout).toContain("/at/all");
      expect(piped.stdout).not.toContain("…");
      expect(Math.max(...piped.stdout.split("\n").map((l) => l.length))).toBeLessThan(200);
    },
    SPAWNS,
  );

  it(
    "shows health, searches deliveries, recovers failed ones and rotates the secret",
    async () => {
      const { data: webhook } = await c.admin("POST /api/admin/webhooks", {
        data: {
          name: "operated",
          url: `${receiver.url}/operated`,
          secret: "the-first-long-secret",
          events: ["ROOM_CREATED"],
        },
      });
      const id = String(webhook.id);
      // A receiver that answers 410 Gone: the attempt fails and Parley disables the endpoint.
      receiver.respondWith((req) =>
        req.path.endsWith("/operated") ? { status: 410, body: "moved away" } : { status: 204 },
      );
      try {
        const failed = await parley(["webhooks", "test", id, "--wait", "--json"], env);
        expect(failed.code).toBe(1);
        const delivery = JSON.parse(failed.stdout) as { id: number; eventId: string };
        await waitFor("the endpoint disabled as gone", async () => {
          const { data } = await c.admin("GET /api/admin/webhooks/{id}", { id: webhook.id });
          return data.disabledReason === "gone";
        });

        const health = await parley(["webhooks", "health", id], env);
        expect(health.stderr).toBe("");
        expect(health.code).toBe(0);
        expect(health.stdout).toContain(`Webhook ${id} "operated" -> ${receiver.url}/operated`);
        expect(health.stdout).toMatch(/^ {2}state: +disabled by Parley: it answered 410 Gone \(/m);
        // The 410 attempt, and any retry that was already on its way when the endpoint was disabled.
        expect(health.stdout).toMatch(/^ {2}attempts \(24 h\): +[1-9]\d*$/m);
        expect(health.stdout).toMatch(/^ {2}success rate \(24 h\): +0\.0%$/m);
        expect(health.stdout).toMatch(/^ {2}failures in a row: +[1-9]\d*$/m);
        expect(health.stdout).toMatch(/^ {2}last error: +\S.*$/m);
        const healthJson = JSON.parse(
          (await parley(["webhooks", "health", id, "--json"], env)).stdout,
        );
        expect(healthJson).toMatchObject({ successRate24h: 0, lastSuccessAt: null });
        expect(healthJson.consecutiveFailures).toBe(healthJson.attempts24h);

        // Search across endpoints: a table, JSON, filters, enum errors, the terminal's width.
        const table = await parley(["deliveries", "search", "--webhook", id], env);
        expect(table.code).toBe(0);
        expect(table.stdout).toMatch(
          /^ID\s+WEBHOOK\s+EVENT\s+STATUS\s+ATTEMPTS\s+LAST\s+CREATED\s+EVENT ID$/m,
        );
        expect(table.stdout).toMatch(
          new RegExp(
            `^${delivery.id}\\s+${id} operated\\s+WEBHOOK_TEST\\s+(FAILED|EXHAUSTED)\\s+\\d+\\s+410\\s`,
            "m",
          ),
        );
        const byEventId = await parley(
          ["deliveries", "search", "--event-id", delivery.eventId, "--since", "1h", "--json"],
          env,
        );
        expect(byEventId.code).toBe(0);
        expect(JSON.parse(byEventId.stdout)).toEqual([
          expect.objectContaining({ id: delivery.id, webhookName: "operated" }),
        ]);
        const none = await parley(
          ["deliveries", "search", "--webhook", id, "--status", "success"],
          env,
        );
        expect(none.stdout).toBe("No deliveries match.\n");
        const narrow = await parley(["deliveries", "search", "--webhook", id], {
          ...env,
          COLUMNS: "72",
        });
        for (const line of narrow.stdout.trimEnd().split("\n"))
          expect(line.length, line).toBeLessThanOrEqual(72);
        const badStatus = await parley(["deliveries", "search", "--status", "done"], env);
        expect(badStatus.code).toBe(2);
        expect(badStatus.stderr).toBe(
          'parley: --status must be one of PENDING, SUCCESS, FAILED, EXHAUSTED; got "done"\n',
        );
        const badSince = await parley(["deliveries", "search", "--since", "yesterday"], env);
        expect(badSince.code).toBe(2);
        expect(badSince.stderr).toMatch(/^parley: --since must be an ISO date or time/);

        // Recover: quiet when not on a terminal, the count printed.
        const badRecover = await parley(
          ["webhooks", "recover", id, "--since", "1h", "--status", "PENDING"],
          env,
        );
        expect(badRecover.stderr).toBe(
          'parley: --status must be one of FAILED, EXHAUSTED; got "PENDING"\n',
        );
        const recovered = await parley(
          ["webhooks", "recover", id, "--since", "1h", "--status", "failed,EXHAUSTED"],
          env,
        );
        expect(recovered.stderr).toBe("");
        expect(recovered.code).toBe(0);
        expect(recovered.stdout).toMatch(
          new RegExp(
            `^Queued 1 delivery again for webhook ${id} \\(FAILED or EXHAUSTED, queued since \\S+Z\\)\\.$`,
            "m",
          ),
        );
        const future = await parley(
          ["webhooks", "recover", id, "--since", "2099-01-01", "--json"],
          env,
        );
        expect(JSON.parse(future.stdout)).toEqual({ queued: 0 });

        // Rotate: the new secret shown once; the next delivery is signed with it.
        const rotated = await parley(["webhooks", "rotate-secret", id, "--overlap", "60"], env);
        expect(rotated.code).toBe(0);
        const secret = /^ {2}secret: (whsec_\S+)$/m.exec(rotated.stdout)?.[1];
        expect(secret, rotated.stdout).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
        expect(rotated.stdout).toMatch(/the previous secret also signs until \S+Z$/m);
        const badOverlap = await parley(["webhooks", "rotate-secret", id, "--overlap", "1w"], env);
        expect(badOverlap.stderr).toMatch(/^parley: --overlap must be a whole number of seconds/);
        const chosen = await parley(
          [
            "webhooks",
            "rotate-secret",
            id,
            "--secret",
            "a-chosen-long-secret",
            "--overlap",
            "0",
            "--json",
          ],
          env,
        );
        expect(JSON.parse(chosen.stdout)).toMatchObject({ secret: "a-chosen-long-secret" });

        receiver.respondWith(() => ({ status: 204 }));
        await c.admin("PATCH /api/admin/webhooks/{id}", {
          id: webhook.id,
          data: { enabled: true },
        });
        const before = receiver.requests.length;
        const ok = await parley(["webhooks", "test", id, "--wait"], env);
        expect(ok.code, ok.stdout + ok.stderr).toBe(0);
        const sent = receiver.requests.slice(before).find((r) => r.body.includes("WEBHOOK_TEST"))!;
        expect(sent.headers["x-webhook-signature-256"]).toBe(
          signWebhookPayload("a-chosen-long-secret", sent.body),
        );
      } finally {
        receiver.respondWith(() => ({ status: 204 }));
      }
    },
    SPAWNS,
  );

  it.runIf(HAS_SCRIPT)(
    "shows a progress line while recover works, on a terminal",
    async () => {
      const { data: webhook } = await c.admin("POST /api/admin/webhooks", {
        data: {
          name: "recover-tty",
          url: receiver.url,
          secret: "a-long-enough-secret",
          events: ["ROOM_CREATED"],
        },
      });
      const run = await parleyInTerminal(
        ["webhooks", "recover", String(webhook.id), "--since", "10m"],
        env,
      );
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(
        /⠋ queueing the failed deliveries of webhook \d+ since \S+ \(0s\)/,
      );
      expect(run.stdout).toContain("\r\u001b[K");
      expect(run.stdout).toMatch(/Queued 0 deliveries again for webhook \d+ \(EXHAUSTED,/);
    },
    SPAWNS,
  );

  it.runIf(HAS_SCRIPT)(
    "shows a spinner while test --wait waits, on a terminal",
    async () => {
      const { data: webhook } = await c.admin("POST /api/admin/webhooks", {
        data: {
          name: "slow",
          url: receiver.url,
          secret: "a-long-enough-secret",
          events: ["ROOM_CREATED"],
        },
      });
      // Slower than a spinner frame, well inside the test knobs' 1 s receiver time-out.
      receiver.respondWith(() => ({ status: 204, delayMs: 600 }));
      try {
        const run = await parleyInTerminal(["webhooks", "test", String(webhook.id), "--wait"], env);
        expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
        expect(run.stdout).toMatch(/⠋ waiting for delivery \d+'s first attempt \(0s\)/);
        expect(run.stdout).toContain("\r\u001b[K"); // the line is cleared before the outcome
        expect(run.stdout).toMatch(/Test delivery \d+: SUCCESS \(answered 204, \d+ ms\)/);
      } finally {
        receiver.respondWith(() => ({ status: 204 }));
      }
    },
    SPAWNS,
  );
});
