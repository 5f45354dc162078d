import {
  RequestError,
  paginate,
  parseWebhookEvent,
  verifyParleySignature,
  type Webhook,
} from "@parley/client";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { describeEachDialect } from "../../helpers/dialects.js";
import { startReceiver, type Receiver } from "../../helpers/receiver.js";
import { waitFor } from "../../helpers/wait-for.js";
import { startClientApp, type ClientApp } from "./client-app.js";

const SECRET = "whsec_Y2xpZW50LWFkbWluLXRlc3QtMDEyMzQ1Njc4OQ==";

describeEachDialect("the client and the outbound webhooks API on $name", (dialect) => {
  let c: ClientApp;
  let receiver: Receiver;
  beforeAll(async () => {
    c = await startClientApp(dialect, {
      deliveries: true,
      // Failed deliveries stay FAILED while the test looks at them.
      config: { webhookBackoffBaseMs: 60_000, webhookBackoffMaxMs: 60_000 },
    });
  });
  afterAll(async () => {
    await c?.close();
  });
  afterEach(async () => {
    await receiver?.close();
  });

  async function createWebhook(
    name: string,
    url: string,
    events: Webhook["events"] = ["ADMIN_USER_DISABLED"],
  ) {
    const { data } = await c.admin("POST /api/admin/webhooks", {
      data: { name, url, secret: SECRET, events },
    });
    return data;
  }

  it("creates, reads, lists, updates and deletes an endpoint", async () => {
    // The webhook's `url` shares its name with the request's own url option: the body goes in data.
    const created = await c.admin("POST /api/admin/webhooks", {
      data: {
        name: "crud",
        url: "https://hooks.example.com/parley",
        secret: SECRET,
        events: ["MESSAGE_CREATED", "ROOM_CREATED"],
        enabled: false,
      },
    });
    expect(created.status).toBe(201);
    expect(created.data).toEqual({
      id: expect.any(Number),
      name: "crud",
      url: "https://hooks.example.com/parley",
      events: ["MESSAGE_CREATED", "ROOM_CREATED"],
      enabled: false,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      signatureScheme: "parley",
      payloadFormat: "parley",
      traceContext: false,
      ordering: "none",
      heldLanes: [],
      publicKey: null,
      verification: "not_required",
      auth: null,
      tls: null,
      roomIds: null,
      headers: {},
      maxDeliveriesPerSecond: null,
      disabledReason: "manual",
      disabledAt: created.data.createdAt,
      disabledBy: null,
      state: "disabled",
      autoDisableAt: null,
      failuresToAutoDisable: null,
      health: expect.objectContaining({ attempts24h: 0, consecutiveFailures: 0 }),
    });
    expect(JSON.stringify(created.data)).not.toContain(SECRET);
    const id = created.data.id;

    expect((await c.admin("GET /api/admin/webhooks/{id}", { id })).data.name).toBe("crud");
    const patched = await c.admin("PATCH /api/admin/webhooks/{id}", {
      id,
      data: { enabled: true, name: "renamed" },
    });
    expect(patched.data).toMatchObject({ id, enabled: true, name: "renamed" });
    const listed = await paginate.all(c.admin, "GET /api/admin/webhooks", { limit: 1 });
    expect(listed.map((w) => w.id)).toContain(id);

    expect((await c.admin("DELETE /api/admin/webhooks/{id}", { id })).status).toBe(204);
    const gone = (await c
      .admin("GET /api/admin/webhooks/{id}", { id })
      .catch((e: unknown) => e)) as RequestError;
    expect(gone).toBeInstanceOf(RequestError);
    expect(gone.status).toBe(404);
    expect(gone.code).toBe("not_found");
  });

  it("reports each validation failure with its own code, the secret redacted", async () => {
    const attempt = (fields: Record<string, unknown>) =>
      c
        .admin("POST /api/admin/webhooks", {
          data: {
            name: "bad",
            url: "https://hooks.example.com/x",
            secret: SECRET,
            events: ["MESSAGE_CREATED"],
            ...fields,
          } as never,
        })
        .then(() => expect.unreachable("the create should fail"))
        .catch((e: unknown) => e as RequestError);
    const short = await attempt({ secret: "too-short" });
    expect(short.code).toBe("invalid_secret");
    expect(short.request.body).toMatchObject({ secret: "[REDACTED]" });
    expect(`${short.message}${JSON.stringify(short)}`).not.toContain("too-short");
    expect((await attempt({ events: [] })).code).toBe("invalid_events");
    expect((await attempt({ url: "not a url" })).code).toBe("invalid_url");
    expect((await attempt({ name: "" })).code).toBe("invalid_name");
    expect((await attempt({ colour: "blue" })).code).toBe("unknown_field");
  });

  it("sends a test delivery, logs it, and redelivers the same bytes", async () => {
    receiver = await startReceiver();
    const webhook = await createWebhook("tested", receiver.url);

    const queued = await c.admin("POST /api/admin/webhooks/{id}/test", { id: webhook.id });
    expect(queued.status).toBe(202);
    expect(queued.data).toEqual({ deliveryId: expect.any(Number), status: "PENDING", held: false });

    const [first] = await receiver.waitForRequests(1);
    expect(
      verifyParleySignature(SECRET, first!.body, first!.headers["x-webhook-signature-256"]),
    ).toBe(true);
    const event = parseWebhookEvent(first!.body);
    expect(event.event).toBe("WEBHOOK_TEST");
    if (event.event === "WEBHOOK_TEST") expect(event.data.requestedBy).toBe("admin");
    expect(event.webhookId).toBe(webhook.id);

    const summary = await waitFor("the delivery to succeed", async () => {
      const page = await c.admin("GET /api/admin/webhooks/{id}/deliveries", {
        id: webhook.id,
        status: "SUCCESS",
      });
      return page.data.items.find((d) => d.id === queued.data.deliveryId);
    });
    expect(summary).toMatchObject({
      webhookId: webhook.id,
      event: "WEBHOOK_TEST",
      attempts: 1,
      lastResponseStatus: 204,
    });

    const detail = await c.admin("GET /api/admin/webhooks/{id}/deliveries/{deliveryId}", {
      id: webhook.id,
      deliveryId: queued.data.deliveryId,
    });
    expect(detail.data.payload).toEqual(JSON.parse(first!.body.toString("utf8")));
    expect(detail.data.attemptHistory).toEqual([
      expect.objectContaining({ attempt: 1, responseStatus: 204, error: null }),
    ]);

    const again = await c.admin("POST /api/admin/webhooks/{id}/deliveries/{deliveryId}/redeliver", {
      id: webhook.id,
      deliveryId: queued.data.deliveryId,
    });
    expect(again.status).toBe(202);
    expect(again.data.deliveryId).not.toBe(queued.data.deliveryId);
    const [, second] = await receiver.waitForRequests(2);
    expect(second!.body.equals(first!.body)).toBe(true);
    expect(second!.headers["x-webhook-signature-256"]).toBe(
      first!.headers["x-webhook-signature-256"],
    );
  });

  it("rotates a secret, recovers, searches and lists event types through typed routes", async () => {
    receiver = await startReceiver();
    const webhook = await createWebhook("operated", receiver.url);
    const rotated = await c.admin("POST /api/admin/webhooks/{id}/rotate-secret", {
      id: webhook.id,
      overlapSeconds: 60,
    });
    expect(rotated.data).toEqual({
      secret: expect.stringMatching(/^whsec_/),
      previousSecretExpiresAt: expect.any(String),
    });
    await c.admin("POST /api/admin/webhooks/{id}/test", { id: webhook.id });
    await receiver.waitForRequests(1);
    const found = await waitFor("the delivery in the search", async () => {
      const page = await c.admin("GET /api/admin/deliveries", { webhookId: webhook.id });
      return page.data.items[0];
    });
    expect(found.webhookName).toBe("operated");
    expect(found.eventId).toMatch(/^evt_/);
    const recovered = await c.admin("POST /api/admin/webhooks/{id}/recover", {
      id: webhook.id,
      since: new Date(Date.now() - 60_000).toISOString(),
    });
    expect(recovered.data).toEqual({ queued: 0 });
    const types = await c.admin("GET /api/admin/webhooks/event-types");
    expect(types.data.items.map((t) => t.name)).toContain("WEBHOOK_ENDPOINT_DISABLED");
  });

  it("pages through the delivery log and filters it by event and status", async () => {
    receiver = await startReceiver();
    receiver.respondWith(() => ({ status: 503 }));
    const webhook = await createWebhook("paged log", receiver.url);
    for (let i = 0; i < 5; i++)
      await c.admin("POST /api/admin/webhooks/{id}/test", { id: webhook.id });
    await receiver.waitForRequests(5);

    const pages = [];
    for await (const page of paginate(c.admin, "GET /api/admin/webhooks/{id}/deliveries", {
      id: webhook.id,
      event: "WEBHOOK_TEST",
      limit: 2,
    })) {
      pages.push(page.items);
    }
    expect(pages.map((items) => items.length)).toEqual([2, 2, 1]);
    const ids = pages.flat().map((d) => d.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a)); // newest first

    const failed = await waitFor("five failed deliveries", async () => {
      const all = await paginate.all(c.admin, "GET /api/admin/webhooks/{id}/deliveries", {
        id: webhook.id,
        status: "FAILED",
      });
      return all.length === 5 && all;
    });
    expect(failed.every((d) => d.lastResponseStatus === 503 && d.nextAttemptAt !== null)).toBe(
      true,
    );
    const none = await c.admin("GET /api/admin/webhooks/{id}/deliveries", {
      id: webhook.id,
      event: "MESSAGE_CREATED",
    });
    expect(none.data).toEqual({ items: [], nextCursor: null });
    await c.admin("DELETE /api/admin/webhooks/{id}", { id: webhook.id });
  });
});
