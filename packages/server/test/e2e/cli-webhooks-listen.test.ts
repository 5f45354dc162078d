import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import crypto from "node:crypto";
import { paginate, signWebhookPayload } from "@parley/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SQLITE } from "../helpers/dialects.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";
import { CLI, cliEnv } from "../helpers/run-cli.js";
import { waitFor } from "../helpers/wait-for.js";
import { startClientApp, type ClientApp } from "../integration/client/client-app.js";

const SECRET = "whsec_Y2xpLWxpc3Rlbi1zZWNyZXQtMDEyMzQ1Njc4OQ==";

interface Listener {
  url: string;
  /** Everything printed to stdout so far. */
  output(): string;
  /** Resolves once stdout has a line matching `pattern`. */
  line(pattern: RegExp): Promise<string>;
  child: ChildProcessWithoutNullStreams;
}

const children: ChildProcessWithoutNullStreams[] = [];

function listen(extra: string[] = [], key = ["--secret", SECRET]): Promise<Listener> {
  const child = spawn(
    process.execPath,
    [CLI, "webhooks", "listen", "--port", "0", ...key, ...extra],
    { env: cliEnv() },
  );
  children.push(child);
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const line = (pattern: RegExp) =>
    waitFor(
      `a line matching ${pattern} in:\n${out}${err}`,
      // The banner goes to stderr under --json; events always to stdout.
      // Whole lines only: a chunk may end inside one (a banner cut after "127.0.0.1:4" would
      // point the endpoint at another port).
      async () =>
        [...out.split("\n").slice(0, -1), ...err.split("\n").slice(0, -1)].find((l) =>
          pattern.test(l),
        ),
      15_000,
    );
  return line(/^Listening for Parley webhooks on /).then((first) => ({
    url: /on (http:\/\/\S+)/.exec(first)![1]!,
    output: () => out,
    line,
    child,
  }));
}

/** Runs `parley webhooks listen --port 0 <args>`, which must refuse to start: its exit code and stderr. */
async function refusedStart(args: string[]): Promise<{ code: number | null; err: string }> {
  const child = spawn(process.execPath, [CLI, "webhooks", "listen", "--port", "0", ...args], {
    env: cliEnv(),
  });
  children.push(child);
  let err = "";
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  return { code, err };
}

/** The listener answered `res` with 401 and printed that it rejected it for `reason`. */
async function expectRejected(listener: Listener, res: Response, reason: string): Promise<void> {
  expect(res.status).toBe(401);
  expect(await listener.line(/✗ rejected/)).toMatch(
    new RegExp(`\\s{2}✗ rejected: ${reason} from 127\\.0\\.0\\.1$`),
  );
}

describe("parley webhooks listen", () => {
  let c: ClientApp;
  beforeAll(async () => {
    c = await startClientApp(SQLITE, {
      deliveries: true,
      // Failed deliveries stay FAILED while the test looks at them.
      config: { webhookBackoffBaseMs: 60_000, webhookBackoffMaxMs: 60_000 },
    });
  });
  afterAll(async () => {
    await c?.close();
  });
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  });

  async function webhookTo(
    url: string,
    signatureScheme: "parley" | "standard-webhooks" | "both" = "parley",
  ) {
    const { data } = await c.admin("POST /api/admin/webhooks", {
      data: { name: "listen", url, secret: SECRET, events: ["MESSAGE_CREATED"], signatureScheme },
    });
    return data;
  }

  it("prints each verified delivery, answers 204, and rejects a forged one with 401", async () => {
    const listener = await listen();
    const webhook = await webhookTo(listener.url);

    await c.admin("POST /api/admin/webhooks/{id}/test", { id: webhook.id });
    const test = await listener.line(/✓ WEBHOOK_TEST/);
    expect(test).toMatch(
      new RegExp(
        `^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  ✓ WEBHOOK_TEST  webhook ${webhook.id}  message=.* requestedBy=admin$`,
      ),
    );

    const { data: room } = await c.admin("POST /api/rooms", { name: "listened" });
    const { data: message } = await c.admin("POST /api/rooms/{roomId}/messages", {
      roomId: room.id,
      content: "hello listener",
    });
    const created = await listener.line(/✓ MESSAGE_CREATED/);
    expect(created).toContain(
      `webhook ${webhook.id}  roomId=${room.id} messageId=${message.id} senderId=${c.t.admin.id}`,
    );
    expect(listener.output()).not.toContain("hello listener");

    const forgedBody = JSON.stringify({
      event: "MESSAGE_CREATED",
      timestamp: new Date().toISOString(),
      webhookId: webhook.id,
      data: {},
    });
    const forged = await fetch(listener.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-webhook-signature-256": signWebhookPayload("not-the-secret-000", forgedBody),
      },
      body: forgedBody,
    });
    await expectRejected(listener, forged, "bad signature");
    const unsigned = await fetch(listener.url, { method: "POST", body: forgedBody });
    expect(unsigned.status).toBe(401);
    expect(await listener.line(/✗ rejected: missing signature/)).toContain("from 127.0.0.1");

    const log = await waitFor("both deliveries logged as SUCCESS", async () => {
      const all = await paginate.all(c.admin, "GET /api/admin/webhooks/{id}/deliveries", {
        id: webhook.id,
      });
      return all.length === 2 && all.every((d) => d.status === "SUCCESS") && all;
    });
    expect(log.map((d) => d.lastResponseStatus)).toEqual([204, 204]);
    await c.admin("DELETE /api/admin/webhooks/{id}", { id: webhook.id });
  }, 60_000);

  it.each(["standard-webhooks", "both"] as const)(
    "verifies a %s-signed delivery from the server, and rejects a bad Standard Webhooks signature even beside a good X-Webhook-Signature-256",
    async (signatureScheme) => {
      // The listener forwards what it verified, so the app sees the headers it was signed with.
      const app: Receiver = await startReceiver();
      try {
        const listener = await listen(["--forward-to", app.url]);
        const webhook = await webhookTo(listener.url, signatureScheme);

        const { data: room } = await c.admin("POST /api/rooms", { name: signatureScheme });
        const { data: message } = await c.admin("POST /api/rooms/{roomId}/messages", {
          roomId: room.id,
          content: "signed the standard way",
        });
        const created = await listener.line(/✓ MESSAGE_CREATED/);
        expect(created).toContain(
          `webhook ${webhook.id}  roomId=${room.id} messageId=${message.id}`,
        );
        const [forwarded] = await app.waitForRequests(1);
        expect(forwarded!.headers["webhook-id"]).toMatch(/^evt_[0-9A-Z]{26}$/);
        expect(forwarded!.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
        expect(forwarded!.headers["x-webhook-signature-256"] !== undefined).toBe(
          signatureScheme === "both",
        );
        const delivery = await waitFor("the delivery to be logged", async () => {
          const { data } = await c.admin("GET /api/admin/webhooks/{id}/deliveries", {
            id: webhook.id,
          });
          return data.items.find((d) => d.status === "SUCCESS");
        });
        expect(delivery.lastResponseStatus).toBe(204);

        // Signed with another key: refused although the X-Webhook-Signature-256 beside it is right.
        const body = JSON.stringify({
          event: "MESSAGE_CREATED",
          timestamp: new Date().toISOString(),
          webhookId: webhook.id,
          data: {},
        });
        const id = "evt_01JZZZZZZZZZZZZZZZZZZZZZZZ";
        const seconds = Math.floor(Date.now() / 1000);
        const wrongKey = crypto
          .createHmac("sha256", "not-the-secret-000")
          .update(`${id}.${seconds}.${body}`)
          .digest("base64");
        const forged = await fetch(listener.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "webhook-id": id,
            "webhook-timestamp": String(seconds),
            "webhook-signature": `v1,${wrongKey}`,
            "x-webhook-signature-256": signWebhookPayload(SECRET, body),
          },
          body,
        });
        await expectRejected(listener, forged, "bad signature");
        expect(app.requests).toHaveLength(1);
        await c.admin("DELETE /api/admin/webhooks/{id}", { id: webhook.id });
      } finally {
        await app.close();
      }
    },
    60_000,
  );

  it("with --scheme standard-webhooks, verifies a both delivery and refuses it replayed with only the parley header", async () => {
    const app: Receiver = await startReceiver();
    try {
      const listener = await listen(["--scheme", "standard-webhooks", "--forward-to", app.url]);
      const webhook = await webhookTo(listener.url, "both");
      const { data: room } = await c.admin("POST /api/rooms", { name: "replayed" });
      await c.admin("POST /api/rooms/{roomId}/messages", { roomId: room.id, content: "once" });
      await listener.line(/✓ MESSAGE_CREATED/);
      const [captured] = await app.waitForRequests(1);

      const replayed = await fetch(listener.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-webhook-signature-256": captured!.headers["x-webhook-signature-256"]!,
        },
        body: captured!.body.toString("utf8"),
      });
      await expectRejected(listener, replayed, "missing signature");
      expect(app.requests).toHaveLength(1);
      await c.admin("DELETE /api/admin/webhooks/{id}", { id: webhook.id });
    } finally {
      await app.close();
    }
  }, 60_000);

  it.each([
    [
      ["--secret", `whsec_${"!".repeat(24)}`],
      /^parley: --secret: the webhook secret starts with whsec_ but the rest is not base64/,
    ],
    [
      ["--secret", SECRET, "--scheme", "both"],
      /^parley: --scheme must be one of standard-webhooks, standard-webhooks-ed25519, parley; got "both"/,
    ],
    [
      ["--public-key", "whpk_!!!!"],
      /^parley: --public-key: the public key is not whpk_ \+ base64 of a 32-byte ed25519 key/,
    ],
  ])(
    "refuses to start with %j, exiting 2 (usage)",
    async (args, message) => {
      const { code, err } = await refusedStart(args);
      expect(code).toBe(2);
      expect(err).toMatch(message);
      expect(err).not.toContain("!!!!");
    },
    60_000,
  );

  it("with --public-key alone, verifies v1a deliveries of a standard-webhooks-ed25519 endpoint and rejects a forged one", async () => {
    const { data: webhook } = await c.admin("POST /api/admin/webhooks", {
      data: {
        name: "listen-ed25519",
        url: "http://127.0.0.1:9/placeholder",
        events: ["MESSAGE_CREATED"],
        signatureScheme: "standard-webhooks-ed25519",
      },
    });
    const listener = await listen([], ["--public-key", webhook.publicKey!]);
    // `url` would name the request's own URL: the body goes as data.
    await c.admin("PATCH /api/admin/webhooks/{id}", {
      id: webhook.id,
      data: { url: listener.url },
    });
    const { data: room } = await c.admin("POST /api/rooms", { name: "ed25519" });
    await c.admin("POST /api/rooms/{roomId}/messages", { roomId: room.id, content: "signed" });
    expect(await listener.line(/✓ MESSAGE_CREATED/)).toContain(`webhook ${webhook.id}`);

    // Signed by another key pair: refused.
    const { privateKey } = crypto.generateKeyPairSync("ed25519");
    const body = JSON.stringify({
      event: "MESSAGE_CREATED",
      timestamp: new Date().toISOString(),
      webhookId: webhook.id,
      data: { roomId: room.id, messageId: 1 },
    });
    const id = "evt_01KMXQ3V5G0000000000000009";
    const seconds = Math.floor(Date.now() / 1000);
    const forged = await fetch(listener.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": id,
        "webhook-timestamp": String(seconds),
        "webhook-signature": `v1a,${crypto.sign(null, Buffer.from(`${id}.${seconds}.${body}`), privateKey).toString("base64")}`,
      },
      body,
    });
    await expectRejected(listener, forged, "bad signature");
    await c.admin("DELETE /api/admin/webhooks/{id}", { id: webhook.id });
  }, 60_000);

  it("forwards verified deliveries with the same bytes and headers and answers the app's status", async () => {
    const app: Receiver = await startReceiver();
    try {
      app.respondWith((_request, index) => ({ status: index === 0 ? 202 : 500 }));
      const listener = await listen(["--forward-to", app.url]);
      const webhook = await webhookTo(listener.url);

      const { data: room } = await c.admin("POST /api/rooms", { name: "forwarded" });
      await c.admin("POST /api/rooms/{roomId}/messages", { roomId: room.id, content: "one" });
      const [forwarded] = await app.waitForRequests(1);
      expect(await listener.line(/✓ MESSAGE_CREATED/)).toContain(`-> 202 from ${app.url}`);
      const delivery = await waitFor("the delivery to be logged", async () => {
        const { data } = await c.admin("GET /api/admin/webhooks/{id}/deliveries", {
          id: webhook.id,
        });
        return data.items.find((d) => d.status === "SUCCESS");
      });
      expect(delivery.lastResponseStatus).toBe(202);
      const { data: detail } = await c.admin(
        "GET /api/admin/webhooks/{id}/deliveries/{deliveryId}",
        {
          id: webhook.id,
          deliveryId: delivery.id,
        },
      );
      expect(JSON.parse(forwarded!.body.toString("utf8"))).toEqual(detail.payload);
      expect(forwarded!.headers["x-webhook-signature-256"]).toBe(
        signWebhookPayload(SECRET, forwarded!.body),
      );
      expect(forwarded!.headers["user-agent"]).toBe("Parley-Webhooks/1.0");

      // The app fails: Parley sees its 500 and will retry.
      await c.admin("POST /api/rooms/{roomId}/messages", { roomId: room.id, content: "two" });
      expect(await listener.line(/-> 500 from/)).toContain("✓ MESSAGE_CREATED");
      const failed = await waitFor("a failed attempt", async () => {
        const { data } = await c.admin("GET /api/admin/webhooks/{id}/deliveries", {
          id: webhook.id,
          status: "FAILED",
        });
        return data.items[0];
      });
      expect(failed.lastResponseStatus).toBe(500);
      await c.admin("DELETE /api/admin/webhooks/{id}", { id: webhook.id });
    } finally {
      await app.close();
    }
  }, 60_000);

  it("refuses to start without a secret", async () => {
    const { code, err } = await refusedStart([]);
    expect(code).toBe(2);
    expect(err).toBe(
      "parley: --secret is required (or set PARLEY_WEBHOOK_SECRET, or use --register), or --public-key for a standard-webhooks-ed25519 endpoint\n",
    );
  }, 60_000);

  it("verifies and prints CloudEvents deliveries in both modes, with the trace id they carry", async () => {
    const listener = await listen(["--json"]);
    const { data: room } = await c.admin("POST /api/rooms", { name: "cloud-listened" });
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    for (const payloadFormat of ["cloudevents", "cloudevents-binary"] as const) {
      const { data: webhook } = await c.admin("POST /api/admin/webhooks", {
        data: {
          name: payloadFormat,
          url: listener.url,
          secret: SECRET,
          events: ["MESSAGE_CREATED"],
          payloadFormat,
          traceContext: true,
        },
      });
      const posted = await fetch(`${c.baseUrl}/api/rooms/${room.id}/messages`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${c.t.admin.token}`,
          "content-type": "application/json",
          traceparent: `00-${traceId}-b7ad6b7169203331-01`,
        },
        body: JSON.stringify({ content: `via ${payloadFormat}` }),
      });
      expect(posted.status).toBe(201);
      const { id: messageId } = (await posted.json()) as { id: number };
      const line = await listener.line(new RegExp(`"format":"${payloadFormat}"`));
      expect(JSON.parse(line)).toMatchObject({
        verified: true,
        format: payloadFormat,
        traceId,
        event: {
          event: "MESSAGE_CREATED",
          webhookId: webhook.id,
          data: { roomId: room.id, messageId },
        },
      });
      await c.admin("DELETE /api/admin/webhooks/{id}", { id: webhook.id });
    }
  });

  it("prints one JSON object per delivery with --json, stdout holding nothing else", async () => {
    const listener = await listen(["--json"]);
    const webhook = await webhookTo(listener.url);
    await c.admin("POST /api/admin/webhooks/{id}/test", { id: webhook.id });
    const line = await listener.line(/"WEBHOOK_TEST"/);
    expect(JSON.parse(line)).toMatchObject({
      verified: true,
      event: { event: "WEBHOOK_TEST", webhookId: webhook.id, data: { requestedBy: "admin" } },
    });
    const unsigned = await fetch(listener.url, { method: "POST", body: "{}" });
    expect(unsigned.status).toBe(401);
    const rejected = await listener.line(/"verified":false/);
    expect(JSON.parse(rejected)).toMatchObject({ verified: false, from: "127.0.0.1" });
    for (const printed of listener.output().trim().split("\n"))
      expect(() => JSON.parse(printed)).not.toThrow();
  });
});
