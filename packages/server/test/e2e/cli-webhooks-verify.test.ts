import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SQLITE } from "../helpers/dialects.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";
import { CLI, cliEnv, runCli as parley } from "../helpers/run-cli.js";
import { waitFor } from "../helpers/wait-for.js";
import { startClientApp, type ClientApp } from "../integration/client/client-app.js";

const SECRET = "whsec_Y2xpLXZlcmlmeS1zZWNyZXQtMDEyMzQ1Njc4OQ==";

describe("the ownership check from the command line", () => {
  let c: ClientApp;
  let env: Record<string, string>;
  const children: ChildProcessWithoutNullStreams[] = [];
  beforeAll(async () => {
    c = await startClientApp(SQLITE, {
      deliveries: true,
      // Failed challenges stay FAILED while the test looks at them.
      config: {
        webhookVerifyOwnership: true,
        webhookBackoffBaseMs: 60_000,
        webhookBackoffMaxMs: 60_000,
      },
    });
    env = { PARLEY_URL: c.baseUrl, PARLEY_TOKEN: c.t.admin.token };
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    await c?.close();
  });

  it("parley webhooks listen answers the challenge, so an endpoint pointed at it is verified", async () => {
    const child = spawn(
      process.execPath,
      [CLI, "webhooks", "listen", "--port", "0", "--secret", SECRET],
      { env: cliEnv() },
    );
    children.push(child);
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const url = await waitFor(
      "the listener's address",
      async () => /on (http:\/\/\S+)/.exec(out)?.[1],
      15_000,
    );
    const { data: webhook } = await c.admin("POST /api/admin/webhooks", {
      data: { name: "listened", url, secret: SECRET, events: ["MESSAGE_CREATED"] },
    });
    expect(webhook.verification).toBe("pending");
    await waitFor("verified", async () => {
      const { data } = await c.admin("GET /api/admin/webhooks/{id}", { id: webhook.id });
      return data.verification === "verified";
    });
    expect(out).toMatch(/✓ WEBHOOK_VERIFICATION {2}webhook \d+ {2}challenge=[A-Za-z0-9_-]{32}/);
  }, 60_000);

  it("parley webhooks create --scheme standard-webhooks-ed25519 shows the public key and the pending check, and no secret", async () => {
    const created = await parley(
      [
        "webhooks",
        "create",
        "--name",
        "ed25519 from the CLI",
        "--url",
        "http://127.0.0.1:9/nowhere",
        "--events",
        "MESSAGE_CREATED",
        "--scheme",
        "standard-webhooks-ed25519",
      ],
      env,
    );
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^ {2}signature scheme: standard-webhooks-ed25519$/m);
    expect(created.stdout).toMatch(/^ {2}public key: whpk_[A-Za-z0-9+/]{43}= /m);
    expect(created.stdout).toMatch(/^ {2}ownership: pending /m);
    expect(created.stdout).not.toMatch(/secret:/);
  }, 60_000);

  it("parley webhooks verify --wait sends the challenge again and says whether it passed", async () => {
    const receiver: Receiver = await startReceiver();
    try {
      receiver.respondWith(() => ({ status: 200, body: "not the challenge" }));
      const { data: webhook } = await c.admin("POST /api/admin/webhooks", {
        data: { name: "to verify", url: receiver.url, secret: SECRET, events: ["MESSAGE_CREATED"] },
      });
      await receiver.waitForRequests(1);

      const failed = await parley(["webhooks", "verify", String(webhook.id), "--wait"], env);
      expect(failed.code).toBe(1);
      expect(failed.stdout).toMatch(
        /^Ownership challenge \d+: FAILED \(answered 200, \d+ ms\)\n {2}verification: pending\n$/,
      );

      receiver.respondWith((request) => ({
        status: 200,
        body: JSON.stringify({
          challenge: (JSON.parse(request.body.toString()) as { data: { challenge: string } }).data
            .challenge,
        }),
      }));
      const passed = await parley(["webhooks", "verify", String(webhook.id), "--wait"], env);
      expect(passed.code).toBe(0);
      expect(passed.stdout).toMatch(
        /: SUCCESS \(answered 200, \d+ ms\)\n {2}verification: verified\n$/,
      );

      const queued = await parley(["webhooks", "verify", String(webhook.id)], env);
      expect(queued.stdout).toMatch(
        /^Queued the ownership challenge \(delivery \d+\) to webhook \d+\.\n$/,
      );
      const unknown = await parley(["webhooks", "verify", "999999"], env);
      expect(unknown.code).not.toBe(0);
    } finally {
      await receiver.close();
    }
  }, 90_000);
});
