import { execFile, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { paginate, signWebhookPayload } from "@parley/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SQLITE } from "../../packages/server/test/helpers/dialects.js";
import { waitFor } from "../../packages/server/test/helpers/wait-for.js";
import {
  startClientApp,
  type ClientApp,
} from "../../packages/server/test/integration/client/client-app.js";

const EXAMPLES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SECRET = "whsec_ZXhhbXBsZXMtcmVjZWl2ZXItc2VjcmV0LTAx";
const env = { PATH: process.env.PATH, HOME: process.env.HOME };

const children: ChildProcessWithoutNullStreams[] = [];

describe("the examples, against a running Parley", () => {
  let c: ClientApp;
  beforeAll(async () => {
    c = await startClientApp(SQLITE, { deliveries: true });
  });
  afterAll(async () => {
    await c?.close();
  });
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  });

  it("receiver.mjs verifies real deliveries, skips a redelivered duplicate, rejects a forgery", async () => {
    const child = spawn(process.execPath, [path.join(EXAMPLES, "receiver.mjs")], {
      env: { ...env, PORT: "0", PARLEY_WEBHOOK_SECRET: SECRET },
    });
    children.push(child);
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const printed = (pattern: RegExp) =>
      waitFor(`${pattern} in:\n${out}`, async () => pattern.exec(out), 15_000);
    const url = (await printed(/listening on (\S+)/))[1]!;

    const { data: webhook } = await c.admin("POST /api/admin/webhooks", {
      data: { name: "example receiver", url, secret: SECRET, events: ["MESSAGE_CREATED"] },
    });
    const { data: room } = await c.admin("POST /api/rooms", { name: "example" });
    const { data: message } = await c.admin("POST /api/rooms/{roomId}/messages", {
      roomId: room.id,
      content: "hi",
    });
    await printed(new RegExp(`message ${message.id} in room ${room.id}`));

    const delivery = await waitFor("the delivery to succeed", async () => {
      const all = await paginate.all(c.admin, "GET /api/admin/webhooks/{id}/deliveries", {
        id: webhook.id,
      });
      return all.find((d) => d.status === "SUCCESS");
    });
    expect(delivery.lastResponseStatus).toBe(204);

    // The same event again (same webhookId, event and messageId) is acknowledged, not handled.
    await c.admin("POST /api/admin/webhooks/{id}/deliveries/{deliveryId}/redeliver", {
      id: webhook.id,
      deliveryId: delivery.id,
    });
    await printed(new RegExp(`duplicate ${webhook.id}:MESSAGE_CREATED:${message.id}: skipped`));
    expect(out.match(new RegExp(`message ${message.id} in room`, "g"))).toHaveLength(1);

    const body = JSON.stringify({
      event: "MESSAGE_CREATED",
      timestamp: "x",
      webhookId: 1,
      data: {},
    });
    const forged = await fetch(url, {
      method: "POST",
      headers: { "x-webhook-signature-256": signWebhookPayload("wrong-secret-00000", body) },
      body,
    });
    expect(forged.status).toBe(401);
    await printed(/rejected: bad signature/);
  });

  it("post-to-room.mjs posts through an inbound webhook URL, and explains a bad one", async () => {
    const { data: room } = await c.admin("POST /api/rooms", { name: "example-inbound" });
    const { data: hook } = await c.admin("POST /api/admin/inbound-webhooks", {
      roomId: room.id,
      displayName: "Example",
    });
    // The server names its configured address; this one listens on a random port.
    const ingestUrl = `${c.baseUrl}${new URL(hook.url).pathname}`;

    const posted = await run(["post-to-room.mjs", ingestUrl, "Deploy **finished**"]);
    expect(posted.stderr).toBe("");
    expect(posted.code).toBe(0);
    const messageId = Number(/^posted message (\d+) at \S+Z\n$/.exec(posted.stdout)![1]);
    const { data: message } = await c.admin("GET /api/rooms/{roomId}/messages/{messageId}", {
      roomId: room.id,
      messageId,
    });
    expect(message).toMatchObject({
      content: "Deploy **finished**",
      sender: { type: "integration", displayName: "Example" },
    });

    const fromEnv = await run(["post-to-room.mjs", "--html", "<b>built</b>"], {
      PARLEY_INBOUND_URL: ingestUrl,
    });
    expect(fromEnv.code).toBe(0);

    await c.admin("PATCH /api/admin/inbound-webhooks/{id}", { id: hook.id, enabled: false });
    const refused = await run(["post-to-room.mjs", ingestUrl, "again"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^post-to-room: not_found: /);
    expect(refused.stderr + refused.stdout).not.toContain(hook.token);
  });
});

function run(
  args: string[],
  extraEnv: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const [script, ...rest] = args;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(EXAMPLES, script!), ...rest],
      { env: { ...env, ...extraEnv }, timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
