import { fastifyWebhooks, signWebhookPayload, type WebhookEvent } from "@parley/client";
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";

const SECRET = "whsec_ZmFzdGlmeS1wbHVnaW4tc2VjcmV0LTAwMDE=";
const BODY = JSON.stringify({
  event: "ROOM_CREATED",
  timestamp: "2026-11-22T10:00:00.000Z",
  webhookId: 2,
  data: { roomId: 5, createdBy: "ann", convertedFromDm: true },
});

describe("fastifyWebhooks", () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
  });

  async function start(events: WebhookEvent[]) {
    app = Fastify();
    // The app's own JSON routes keep their JSON parser: the plugin's raw parser is scoped.
    app.post("/api/echo", async (request) => ({ parsed: request.body }));
    await app.register(fastifyWebhooks, {
      prefix: "/webhooks/parley",
      secret: SECRET,
      onEvent: (event) => {
        events.push(event);
      },
    });
    return app;
  }

  const deliver = (server: FastifyInstance, body: string, signature?: string) =>
    server.inject({
      method: "POST",
      url: "/webhooks/parley",
      headers: {
        "content-type": "application/json",
        ...(signature === undefined ? {} : { "x-webhook-signature-256": signature }),
      },
      payload: body,
    });

  it("verifies the raw bytes, calls onEvent and answers 204", async () => {
    const events: WebhookEvent[] = [];
    const server = await start(events);
    const response = await deliver(server, BODY, signWebhookPayload(SECRET, BODY));
    expect(response.statusCode).toBe(204);
    expect(events).toEqual([JSON.parse(BODY)]);
  });

  it("answers 401 to a forged or missing signature and 400 to a signed non-envelope", async () => {
    const events: WebhookEvent[] = [];
    const server = await start(events);
    const forged = await deliver(server, BODY, signWebhookPayload("forged-secret-000000", BODY));
    expect(forged.statusCode).toBe(401);
    expect(forged.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(forged.json()).toMatchObject({ status: 401, code: "invalid_signature" });
    expect((await deliver(server, BODY)).statusCode).toBe(401);
    const junk = '{"not":"an envelope"}';
    const bad = await deliver(server, junk, signWebhookPayload(SECRET, junk));
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: "invalid_payload" });
    expect(events).toEqual([]);
  });

  it("leaves the rest of the app's JSON parsing alone", async () => {
    const server = await start([]);
    const echoed = await server.inject({ method: "POST", url: "/api/echo", payload: { a: 1 } });
    expect(echoed.json()).toEqual({ parsed: { a: 1 } });
  });

  it("lets onEvent answer through the reply, and answers 500 when it throws", async () => {
    app = Fastify({ logger: false });
    let fail = false;
    await app.register(fastifyWebhooks, {
      secret: [SECRET, "an-older-secret-being-rotated-out"],
      path: "/hook",
      onEvent: async (event, request, reply) => {
        if (fail) throw new Error("downstream is down");
        expect(request.parleyEvent).toBe(event);
        reply.code(202).send({ queued: event.event });
      },
    });
    const ok = await app.inject({
      method: "POST",
      url: "/hook",
      headers: {
        "content-type": "application/json",
        "x-webhook-signature-256": signWebhookPayload(SECRET, BODY),
      },
      payload: BODY,
    });
    expect(ok.statusCode).toBe(202);
    expect(ok.json()).toEqual({ queued: "ROOM_CREATED" });
    fail = true;
    const failed = await app.inject({
      method: "POST",
      url: "/hook",
      headers: {
        "content-type": "application/json",
        "x-webhook-signature-256": signWebhookPayload(SECRET, BODY),
      },
      payload: BODY,
    });
    expect(failed.statusCode).toBe(500);
  });
});
