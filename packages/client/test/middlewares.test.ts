import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import {
  createWebhookHandler,
  fastifyWebhooks,
  signWebhookPayload,
  webhookMiddleware,
  WebhookSecretError,
  type MiddlewareRequest,
  type WebhookEvent,
  type WebhookRejected,
} from "../src/index.js";
import {
  jsonParser,
  rawParser,
  startConnectApp,
  type Middleware,
} from "./helpers/connect-harness.js";

const SECRET = "whsec_bWlkZGxld2FyZS10ZXN0LXNlY3JldC0wMQ==";
const BODY = JSON.stringify({
  event: "MESSAGE_CREATED",
  timestamp: "2026-11-22T10:00:00.000Z",
  webhookId: 7,
  data: { roomId: 12, messageId: 345, senderId: 3, timestamp: "2026-11-22T09:59:59.874Z" },
});

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

function deliver(url: string, body: string, signature?: string, method = "POST") {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (signature !== undefined) headers["x-webhook-signature-256"] = signature;
  return fetch(url, { method, headers, body: method === "GET" ? undefined : body });
}

async function listen(listener: http.RequestListener): Promise<string> {
  const server = http.createServer(listener);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

describe("createWebhookHandler (node:http)", () => {
  it("calls onEvent with the typed event and answers 204 to a good signature", async () => {
    const events: WebhookEvent[] = [];
    const url = await listen(
      createWebhookHandler({
        secret: SECRET,
        onEvent: (event, { rawBody }) => {
          expect(rawBody.toString()).toBe(BODY);
          events.push(event);
        },
      }),
    );
    const response = await deliver(url, BODY, signWebhookPayload(SECRET, BODY));
    expect(response.status).toBe(204);
    expect(events).toEqual([JSON.parse(BODY)]);
  });

  it("answers 401 problem JSON to a forged or missing signature and never calls onEvent", async () => {
    const rejected: WebhookRejected[] = [];
    let called = false;
    const url = await listen(
      createWebhookHandler({
        secret: SECRET,
        onEvent: () => {
          called = true;
        },
        onRejected: (rejection) => rejected.push(rejection),
      }),
    );
    const forged = await deliver(url, BODY, signWebhookPayload("not-the-secret", BODY));
    expect(forged.status).toBe(401);
    expect(forged.headers.get("content-type")).toBe("application/problem+json");
    expect(await forged.json()).toMatchObject({ status: 401, code: "invalid_signature" });
    const missing = await deliver(url, BODY);
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as { detail: string }).detail).toContain("missing");
    expect(called).toBe(false);
    expect(rejected.map((r) => r.status)).toEqual([401, 401]);
  });

  it("answers 400 to a correctly signed body that is no envelope", async () => {
    const url = await listen(createWebhookHandler({ secret: SECRET, onEvent: () => undefined }));
    const body = JSON.stringify({ hello: "world" });
    const response = await deliver(url, body, signWebhookPayload(SECRET, body));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ status: 400, code: "invalid_payload" });
  });

  it("answers 500 when onEvent throws, so Parley retries", async () => {
    const errors: unknown[] = [];
    const url = await listen(
      createWebhookHandler({
        secret: SECRET,
        onEvent: async () => {
          throw new Error("database down");
        },
        onError: (error) => errors.push(error),
      }),
    );
    const response = await deliver(url, BODY, signWebhookPayload(SECRET, BODY));
    expect(response.status).toBe(500);
    expect(errors).toHaveLength(1);
  });

  it("answers as onEvent says, 405 to GET and 413 to an oversized body", async () => {
    const url = await listen(
      createWebhookHandler({
        secret: SECRET,
        maxBodyBytes: 1024,
        onEvent: () => ({ status: 202, body: "queued" }),
      }),
    );
    const accepted = await deliver(url, BODY, signWebhookPayload(SECRET, BODY));
    expect(accepted.status).toBe(202);
    expect(await accepted.text()).toBe("queued");
    const get = await deliver(url, "", undefined, "GET");
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    const big = "x".repeat(4096);
    expect((await deliver(url, big, signWebhookPayload(SECRET, big))).status).toBe(413);
  });
});

describe("webhookMiddleware (Express-style)", () => {
  const handler: Middleware = (req, res) => {
    const event = (req as MiddlewareRequest).parleyEvent!;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(event));
  };

  async function app(stack: Middleware[]) {
    const started = await startConnectApp(stack);
    closers.push(started.close);
    return `${started.url}/hook`;
  }

  it.each([
    ["reading the body itself", [] as Middleware[]],
    ["using req.rawBody kept by a JSON parser", [jsonParser({ keepRaw: true })]],
    ["using a Buffer req.body from a raw parser", [rawParser()]],
  ])("sets req.parleyEvent and calls next() for a good signature, %s", async (_label, parsers) => {
    const url = await app([...parsers, webhookMiddleware({ secret: SECRET }), handler]);
    const response = await deliver(url, BODY, signWebhookPayload(SECRET, BODY));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(JSON.parse(BODY));
  });

  it("answers 401 to a forged signature and does not call the route", async () => {
    const url = await app([webhookMiddleware({ secret: SECRET }), handler]);
    const response = await deliver(url, BODY, `sha256=${"0".repeat(64)}`);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: "invalid_signature", status: 401 });
  });

  it("answers 400 to a signed body that is no envelope", async () => {
    const url = await app([webhookMiddleware({ secret: SECRET }), handler]);
    const body = JSON.stringify({ event: "MESSAGE_CREATED" });
    const response = await deliver(url, body, signWebhookPayload(SECRET, body));
    expect(response.status).toBe(400);
  });

  it("passes a set-up error to next() when a JSON parser already ate the raw body", async () => {
    const url = await app([jsonParser(), webhookMiddleware({ secret: SECRET }), handler]);
    const response = await deliver(url, BODY, signWebhookPayload(SECRET, BODY));
    expect(response.status).toBe(500);
    expect(await response.text()).toContain("mount the middleware before express.json()");
  });
});

describe("the schemes a receiver accepts, and its secret", () => {
  /** A `both` delivery as Parley sends it, signed `daysAgo` days ago. */
  function bothDelivery(daysAgo: number): Record<string, string> {
    const at = new Date(Date.now() - daysAgo * 86_400_000);
    const id = "evt_01KMXQ3V5G0000000000000042";
    return {
      "content-type": "application/json",
      "x-webhook-signature-256": signWebhookPayload(SECRET, BODY),
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": new Webhook(SECRET).sign(id, at, BODY),
    };
  }
  const stripped = (headers: Record<string, string>) =>
    Object.fromEntries(Object.entries(headers).filter(([name]) => !name.startsWith("webhook-")));

  it('with schemes: ["standard-webhooks"], answers 401 to a captured delivery replayed without its webhook-* headers', async () => {
    const onEvent = () => undefined;
    const strict = await listen(
      createWebhookHandler({ secret: SECRET, schemes: ["standard-webhooks"], onEvent }),
    );
    const post = (url: string, headers: Record<string, string>) =>
      fetch(url, { method: "POST", headers, body: BODY });
    expect((await post(strict, bothDelivery(0))).status).toBe(204);
    const replay = await post(strict, stripped(bothDelivery(30)));
    expect(replay.status).toBe(401);
    expect(await replay.json()).toMatchObject({
      code: "invalid_signature",
      detail:
        "the webhook-signature header is missing, and this receiver accepts only Standard Webhooks signatures",
    });
    // As documented, the default accepts either scheme, so it takes the replay.
    const either = await listen(createWebhookHandler({ secret: SECRET, onEvent }));
    expect((await post(either, stripped(bothDelivery(30)))).status).toBe(204);
  });

  it("the Express middleware takes the option too", async () => {
    const started = await startConnectApp([
      webhookMiddleware({ secret: SECRET, schemes: ["standard-webhooks"] }),
      (_req, res) => res.writeHead(204).end(),
    ]);
    closers.push(started.close);
    const replay = await fetch(`${started.url}/hook`, {
      method: "POST",
      headers: stripped(bothDelivery(30)),
      body: BODY,
    });
    expect(replay.status).toBe(401);
  });

  it.each([
    ["not base64", `whsec_${"!".repeat(24)}`],
    ["a 7-byte key", `whsec_${Buffer.from("7 bytes").toString("base64")}`],
    ["under 16 bytes", "short-secret"],
  ])(
    "refuses a secret that is %s when the receiver is set up, not at each request",
    async (_label, secret) => {
      const onEvent = () => undefined;
      expect(() => createWebhookHandler({ secret, onEvent })).toThrow(WebhookSecretError);
      expect(() => webhookMiddleware({ secret })).toThrow(WebhookSecretError);
      await expect(fastifyWebhooks({}, { secret, onEvent })).rejects.toThrow(WebhookSecretError);
    },
  );
});
