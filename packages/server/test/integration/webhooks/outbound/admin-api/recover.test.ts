import { afterAll, beforeAll, expect, it } from "vitest";
import type { DeliveryStatus } from "../../../../../src/db/schema.js";
import { createTestApp, type TestApp } from "../../../../helpers/build-app.js";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { createEndpoint } from "../../../../helpers/fixtures.js";
import { admin, insertDelivery } from "./webhook-fixtures.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * Recover (POST /api/admin/webhooks/{id}/recover) without a dispatcher: what it queues stays
 * PENDING until the test says otherwise, so each call's count is exactly what it queued.
 */
describeEachDialect("recovering an endpoint's failed deliveries on $name", (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(async () => {
    await t?.close();
  });

  let events = 0;
  /** A fresh event id, as the spine writes them: "evt_" + 26 characters. */
  const eventId = () => `evt_RECOVERTEST${String(++events).padStart(15, "0")}`;

  async function recover(webhookId: number, body: object): Promise<number> {
    const res = await admin(t, "POST", `/api/admin/webhooks/${webhookId}/recover`, body);
    expect(res.statusCode, res.body).toBe(202);
    return res.json<{ queued: number }>().queued;
  }

  /** The endpoint's deliveries, oldest first: event id and status. */
  async function deliveries(webhookId: number) {
    return t.ctx.db
      .selectFrom("webhook_deliveries")
      .select(["id", "event_id", "status", "body"])
      .where("webhook_id", "=", webhookId)
      .orderBy("id")
      .execute();
  }

  /** What the dispatcher would leave after every queued copy failed again, for good. */
  async function exhaustPending(webhookId: number): Promise<void> {
    await t.ctx.db
      .updateTable("webhook_deliveries")
      .set({ status: "EXHAUSTED", attempts: 5, next_attempt_at: null })
      .where("webhook_id", "=", webhookId)
      .where("status", "=", "PENDING")
      .execute();
  }

  async function failed(
    webhookId: number,
    options: { eventId?: string; status?: DeliveryStatus; createdAt?: number } = {},
  ): Promise<number> {
    return insertDelivery(t, webhookId, {
      status: options.status ?? "EXHAUSTED",
      attempts: 5,
      nextAttemptAt: null,
      createdAt: options.createdAt ?? Date.now() - MINUTE,
      eventId: options.eventId ?? eventId(),
    });
  }

  it("queues each failed event once however often the range is recovered", async () => {
    const { id } = await createEndpoint(t);
    for (let i = 0; i < 10; i++) await failed(id);
    const since = new Date(Date.now() - HOUR).toISOString();
    const queued: number[] = [];
    for (let call = 0; call < 5; call++) queued.push(await recover(id, { since }));
    // Before, every call queued the range again: here 10 each time, and 10, 20, 40, 80, 160
    // when the copies failed between calls (each call matched the copies of the calls before).
    expect(queued).toEqual([10, 0, 0, 0, 0]);
    const rows = await deliveries(id);
    expect(rows).toHaveLength(20);
    const copies = rows.slice(10);
    expect(copies.every((row) => row.status === "PENDING")).toBe(true);
    expect(copies.map((row) => row.event_id)).toEqual(rows.slice(0, 10).map((row) => row.event_id));
    expect(copies.map((row) => row.body)).toEqual(rows.slice(0, 10).map((row) => row.body));

    // Once the copies have failed for good, the same range queues each event once again.
    await exhaustPending(id);
    expect(await recover(id, { since })).toBe(10);
    expect(await recover(id, { since })).toBe(0);
    expect(await deliveries(id)).toHaveLength(30);
  });

  it("leaves an event whose latest delivery, a redelivery or a recovery's copy, succeeded or is pending", async () => {
    const { id } = await createEndpoint(t);
    const original = await failed(id);
    const since = new Date(Date.now() - HOUR).toISOString();
    const redelivered = await admin(
      t,
      "POST",
      `/api/admin/webhooks/${id}/deliveries/${original}/redeliver`,
    );
    expect(redelivered.statusCode).toBe(202);
    expect(await recover(id, { since })).toBe(0);
    await t.ctx.db
      .updateTable("webhook_deliveries")
      .set({ status: "SUCCESS", attempts: 1, next_attempt_at: null })
      .where("id", "=", redelivered.json<{ deliveryId: number }>().deliveryId)
      .execute();
    expect(await recover(id, { since, statuses: ["FAILED", "EXHAUSTED"] })).toBe(0);
    expect(await deliveries(id)).toHaveLength(2);
  });

  it("never recovers an event that reached the endpoint, even when a later redelivery of it failed", async () => {
    const { id } = await createEndpoint(t);
    const delivered = eventId();
    // Delivered once; then redelivered by hand, and that copy failed for good.
    const original = await failed(id, {
      eventId: delivered,
      status: "SUCCESS",
      createdAt: Date.now() - 2 * MINUTE,
    });
    const copy = await admin(
      t,
      "POST",
      `/api/admin/webhooks/${id}/deliveries/${original}/redeliver`,
    );
    expect(copy.statusCode).toBe(202);
    await exhaustPending(id);
    // An event never delivered, for contrast.
    await failed(id);
    const since = new Date(Date.now() - HOUR).toISOString();
    expect(await recover(id, { since, dryRun: true })).toBe(1);
    expect(await recover(id, { since })).toBe(1);
    const rows = await deliveries(id);
    expect(rows.filter((row) => row.event_id === delivered)).toHaveLength(2);
  });

  it("links each redelivery and recovery copy to the delivery it repeats, both ways", async () => {
    const { id } = await createEndpoint(t);
    const original = await failed(id);
    const redelivered = await admin(
      t,
      "POST",
      `/api/admin/webhooks/${id}/deliveries/${original}/redeliver`,
    );
    const first = redelivered.json<{ deliveryId: number }>().deliveryId;
    await exhaustPending(id);
    expect(await recover(id, { since: new Date(Date.now() - HOUR).toISOString() })).toBe(1);
    const second = (await deliveries(id)).at(-1)!.id;

    const detail = async (deliveryId: number) => {
      const res = await admin(t, "GET", `/api/admin/webhooks/${id}/deliveries/${deliveryId}`);
      expect(res.statusCode).toBe(200);
      return res.json<{
        redeliveryOf: number | null;
        redeliveries: Array<{ id: number; status: string }>;
      }>();
    };
    expect(await detail(original)).toMatchObject({
      redeliveryOf: null,
      redeliveries: [{ id: first, status: "EXHAUSTED" }],
    });
    // The recovery copied the event's latest delivery, the redelivery.
    expect(await detail(first)).toMatchObject({
      redeliveryOf: original,
      redeliveries: [{ id: second, status: "PENDING" }],
    });
    expect(await detail(second)).toMatchObject({ redeliveryOf: first, redeliveries: [] });
    const log = await admin(t, "GET", `/api/admin/webhooks/${id}/deliveries`);
    expect(log.json<{ items: Array<{ id: number; redeliveryOf: number | null }> }>().items).toEqual(
      [
        expect.objectContaining({ id: second, redeliveryOf: first }),
        expect.objectContaining({ id: first, redeliveryOf: original }),
        expect.objectContaining({ id: original, redeliveryOf: null }),
      ],
    );
  });

  it("ranges over when each event was first queued, and the range ends now by default", async () => {
    const { id } = await createEndpoint(t);
    const now = Date.now();
    // First queued three hours ago; its copy, recovered a minute ago, failed too.
    const old = eventId();
    await failed(id, { eventId: old, createdAt: now - 3 * HOUR });
    await failed(id, { eventId: old, createdAt: now - MINUTE });
    // A delivery queued in an hour (another process's clock, a row written by hand).
    await failed(id, { createdAt: now + HOUR });

    // The copy falls in the last hour, its event does not.
    expect(await recover(id, { since: new Date(now - HOUR).toISOString() })).toBe(0);
    // Without until, the range ends at the request: the delivery of the next hour is not in it.
    expect(await recover(id, { since: new Date(now - 4 * HOUR).toISOString() })).toBe(1);
    const rows = await deliveries(id);
    expect(rows.at(-1)).toMatchObject({ event_id: old, status: "PENDING" });
    expect(
      await recover(id, {
        since: new Date(now - 4 * HOUR).toISOString(),
        until: new Date(now + 2 * HOUR).toISOString(),
      }),
    ).toBe(1);
  });

  it("answers a dry run with what a call would queue, and queues nothing", async () => {
    const { id } = await createEndpoint(t);
    const repeated = eventId();
    await failed(id, { eventId: repeated, createdAt: Date.now() - 2 * MINUTE });
    await failed(id, { eventId: repeated });
    await failed(id, { status: "FAILED" });
    const since = new Date(Date.now() - HOUR).toISOString();
    // The event with two failed deliveries counts once; FAILED only when asked for.
    expect(await recover(id, { since, dryRun: true })).toBe(1);
    expect(await recover(id, { since, statuses: ["FAILED", "EXHAUSTED"], dryRun: true })).toBe(2);
    expect(await deliveries(id)).toHaveLength(3);
    expect(await recover(id, { since, statuses: ["FAILED", "EXHAUSTED"] })).toBe(2);
    expect(await recover(id, { since, statuses: ["FAILED", "EXHAUSTED"], dryRun: true })).toBe(0);
  });

  it("takes a since later than now, queuing nothing, and refuses an until before since", async () => {
    const { id } = await createEndpoint(t);
    await failed(id);
    expect(await recover(id, { since: new Date(Date.now() + HOUR).toISOString() })).toBe(0);
    const bad = await admin(t, "POST", `/api/admin/webhooks/${id}/recover`, {
      since: new Date().toISOString(),
      until: new Date(Date.now() - 1000).toISOString(),
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe("invalid_time_range");
  });
});
