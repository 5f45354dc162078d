import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { sealSecret } from "../../../../../src/config/secret-box.js";
import { buildEnvelope } from "../../../../../src/events/build-envelope.js";
import { WEBHOOK_TEST } from "../../../../../src/events/event-catalogue.js";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { apiFor, createEndpoint } from "../../../../helpers/fixtures.js";
import { startReceiver, type Receiver } from "../../../../helpers/receiver.js";
import { waitFor } from "../../../../helpers/wait-for.js";
import { expectedSignature, startDeliveryApp, type DeliveryApp } from "./delivery-fixture.js";

describeEachDialect("outbound delivery requests on $name", (dialect) => {
  let d: DeliveryApp;
  let tls: Receiver & { caPem: string };
  let caDir: string;

  beforeAll(async () => {
    tls = await startReceiver({ tls: true });
    caDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-ca-"));
    const caFile = path.join(caDir, "receiver-ca.pem");
    fs.writeFileSync(caFile, tls.caPem);
    d = await startDeliveryApp(dialect, { webhookCaFile: caFile });
  });
  afterAll(async () => {
    await d?.close();
    await tls?.close();
    fs.rmSync(caDir, { recursive: true, force: true });
  });

  async function receiver(): Promise<Receiver> {
    const started = await startReceiver();
    onTestFinished(() => started.close());
    return started;
  }

  it("posts the envelope over HTTPS with exactly the documented headers and a signature over the raw bytes", async () => {
    const endpoint = await d.endpoint(tls.url);
    const before = tls.requests.length;
    await d.emitUser("signed-1");
    const [request] = (await tls.waitForRequests(before + 1)).slice(before);

    expect(request!.method).toBe("POST");
    expect(request!.path).toBe("/hook");
    expect(Object.keys(request!.headers).sort()).toEqual(
      [
        "connection",
        "content-length",
        "content-type",
        "host",
        "user-agent",
        "x-webhook-signature-256",
      ].sort(),
    );
    expect(request!.headers["content-type"]).toBe("application/json");
    expect(request!.headers["user-agent"]).toBe("Parley-Webhooks/1.0");
    expect(request!.headers["content-length"]).toBe(String(request!.body.length));
    expect(request!.headers["x-webhook-signature-256"]).toBe(
      expectedSignature(endpoint.secret, request!.body),
    );
    expect(request!.headers["x-webhook-signature-256"]).toMatch(/^sha256=[0-9a-f]{64}$/);

    const [row] = (await d.deliveries()).filter((r) => r.webhook_id === endpoint.id);
    // The bytes sent are the bytes frozen at enqueue.
    expect(request!.body.toString("utf8")).toBe(row!.body);
    const envelope = JSON.parse(request!.body.toString("utf8"));
    expect(Object.keys(envelope)).toEqual(["event", "timestamp", "webhookId", "data"]);
    expect(envelope).toEqual({
      event: "ADMIN_USER_DISABLED",
      timestamp: new Date(row!.created_at).toISOString(),
      webhookId: endpoint.id,
      data: { username: "signed-1", adminActor: "admin" },
    });

    const done = await waitFor("SUCCESS", async () => {
      const current = await d.delivery(row!.id);
      return current.status === "SUCCESS" && current;
    });
    expect(done).toMatchObject({
      attempts: 1,
      next_attempt_at: null,
      locked_by: null,
      locked_until: null,
      last_response_status: 204,
    });
    const attempts = await d.attempts(row!.id);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({
      attempt: 1,
      response_status: 204,
      response_body: "",
      error: null,
    });
    expect(attempts[0]!.started_at).toBeLessThanOrEqual(request!.receivedAt);
    expect(attempts[0]!.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it("sends an endpoint only the events it subscribed to", async () => {
    const deletedOnly = await receiver();
    const both = await receiver();
    const narrow = await d.endpoint(deletedOnly.url, { events: ["ADMIN_USER_DELETED"] });
    await d.endpoint(both.url, { events: ["ADMIN_USER_DISABLED", "ADMIN_USER_DELETED"] });

    await d.emitUser("filter-1");
    await d.emit("ADMIN_USER_DELETED", { username: "filter-2", adminActor: "admin" });

    const received = await both.waitForRequests(2);
    expect(received.map((r) => JSON.parse(r.body.toString()).event).sort()).toEqual([
      "ADMIN_USER_DELETED",
      "ADMIN_USER_DISABLED",
    ]);
    const [only] = await deletedOnly.waitForRequests(1);
    expect(JSON.parse(only!.body.toString()).data.username).toBe("filter-2");
    // The filter is the fan-out's: the other event never became a delivery to this endpoint.
    expect((await d.deliveries()).filter((r) => r.webhook_id === narrow.id)).toHaveLength(1);
    await d.dispatcher.idle();
    expect(deletedOnly.requests).toHaveLength(1);
  });

  it("holds back deliveries of a disabled endpoint and sends them once it is enabled again", async () => {
    const target = await receiver();
    const endpoint = await d.endpoint(target.url);
    // Queued while enabled, disabled before the dispatcher could see them (same transaction).
    await d.t.ctx.database.transaction(async (tx) => {
      await tx.emit("ADMIN_USER_DISABLED", { username: "held-1", adminActor: "admin" });
      await tx.emit("ADMIN_USER_DISABLED", { username: "held-2", adminActor: "admin" });
      await tx.db
        .updateTable("webhooks")
        .set({ enabled: 0 })
        .where("id", "=", endpoint.id)
        .execute();
    });
    // Two sweeps go by: no claim takes the rows (so nothing is sent), they stay queued, untouched.
    await d.queue.sweepsDone(2);
    const held = (await d.deliveries()).filter((r) => r.webhook_id === endpoint.id);
    expect(held).toHaveLength(2);
    for (const row of held) expect(d.timesClaimed(row.id)).toBe(0);
    expect(target.requests).toHaveLength(0);
    for (const row of held)
      expect(row).toMatchObject({ status: "PENDING", attempts: 0, locked_by: null });

    await d.t.ctx.db
      .updateTable("webhooks")
      .set({ enabled: 1 })
      .where("id", "=", endpoint.id)
      .execute();
    const received = await target.waitForRequests(2, 5_000);
    expect(received.map((r) => JSON.parse(r.body.toString()).data.username).sort()).toEqual([
      "held-1",
      "held-2",
    ]);
  });

  it("sends the test event to its endpoint even while the endpoint is disabled", async () => {
    const target = await receiver();
    const bystander = await receiver();
    const endpoint = await d.endpoint(target.url, { enabled: false });
    const bystanderEndpoint = await d.endpoint(bystander.url);
    const body = buildEnvelope(WEBHOOK_TEST, Date.now(), endpoint.id, {
      message: "ping",
      requestedBy: "admin",
    });
    const id = await d.t.ctx.database.transaction((tx) =>
      tx.enqueue({ webhookId: endpoint.id, event: WEBHOOK_TEST, body }),
    );

    const [request] = await target.waitForRequests(1);
    expect(request!.body.toString()).toBe(body);
    expect(request!.headers["x-webhook-signature-256"]).toBe(
      expectedSignature(endpoint.secret, request!.body),
    );
    await waitFor("test delivery SUCCESS", async () => (await d.delivery(id)).status === "SUCCESS");
    // Enqueued for one endpoint: no row for the other, so nothing can be sent to it.
    expect((await d.deliveries()).filter((r) => r.webhook_id === bystanderEndpoint.id)).toEqual([]);
    expect(bystander.requests).toHaveLength(0);
  });

  it("delivers a redelivery: a new row with the same body bytes and signature", async () => {
    const target = await receiver();
    const endpoint = await d.endpoint(target.url);
    await d.emitUser("again-1");
    const [first] = await target.waitForRequests(1);
    const [original] = (await d.deliveries()).filter((r) => r.webhook_id === endpoint.id);
    await waitFor(
      "original SUCCESS",
      async () => (await d.delivery(original!.id)).status === "SUCCESS",
    );

    const id = await d.t.ctx.database.transaction((tx) =>
      tx.enqueue({ webhookId: endpoint.id, event: "ADMIN_USER_DISABLED", body: original!.body }),
    );
    const [, second] = await target.waitForRequests(2);
    expect(id).not.toBe(original!.id);
    expect(second!.body.equals(first!.body)).toBe(true);
    expect(second!.headers["x-webhook-signature-256"]).toBe(
      first!.headers["x-webhook-signature-256"],
    );
    await waitFor("redelivery SUCCESS", async () => (await d.delivery(id)).status === "SUCCESS");
  });

  it("signs the next delivery with a secret rotated through the admin API", async () => {
    const target = await receiver();
    const created = await createEndpoint(d.t, {
      url: target.url,
      secret: "first-secret-0123456789",
    });
    await d.emitUser("before-rotation");
    const [first] = await target.waitForRequests(1);
    expect(first!.headers["x-webhook-signature-256"]).toBe(
      expectedSignature("first-secret-0123456789", first!.body),
    );

    const rotated = await apiFor(d.t)("PATCH /api/admin/webhooks/{id}", {
      id: created.id,
      data: { secret: "second-secret-0123456789" },
    });
    expect(rotated.status).toBe(200);
    await d.emitUser("after-rotation");
    const [, second] = await target.waitForRequests(2);
    expect(JSON.parse(second!.body.toString()).data.username).toBe("after-rotation");
    expect(second!.headers["x-webhook-signature-256"]).toBe(
      expectedSignature("second-secret-0123456789", second!.body),
    );
    expect(second!.headers["x-webhook-signature-256"]).not.toBe(
      expectedSignature("first-secret-0123456789", second!.body),
    );
  });

  it("records a failed attempt, and sends nothing, when the endpoint secret cannot be decrypted", async () => {
    const target = await receiver();
    // Sealed with another key, as after PARLEY_SECRET_KEY was changed.
    const endpoint = await d.endpoint(target.url, {
      secretCiphertext: sealSecret(crypto.randomBytes(32), "sealed-elsewhere"),
    });
    await d.emitUser("undecryptable");
    const [row] = (await d.deliveries()).filter((r) => r.webhook_id === endpoint.id);
    const [attempt] = await waitFor("the first attempt", async () => {
      const attempts = await d.attempts(row!.id);
      return attempts.length > 0 && attempts;
    });
    expect(attempt).toMatchObject({
      attempt: 1,
      response_status: null,
      response_body: null,
      duration_ms: 0,
      error: "the endpoint secret cannot be decrypted (was PARLEY_SECRET_KEY changed?)",
    });
    expect(await d.delivery(row!.id)).toMatchObject({ status: "FAILED", attempts: 1 });
    // The attempt ended before a connection was opened.
    expect(target.connectionCount).toBe(0);
    expect(target.requests).toHaveLength(0);
  });
});
