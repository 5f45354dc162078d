import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runDeliveryRetention } from "../../../../../src/webhooks/outbound/delivery-engine/retention-job.js";
import { createTestApp, type TestApp, type TestUser } from "../../../../helpers/build-app.js";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { createEndpoint } from "../../../../helpers/fixtures.js";
import { admin } from "./webhook-fixtures.js";

const HOUR = 3_600_000;

/**
 * Replay missing (POST /api/admin/webhooks/{id}/replay-missing) without a dispatcher: what it
 * queues stays PENDING, so each call's answer is exactly what it queued. Messages are posted
 * through the API, so on PostgreSQL the events come from the post's single statement.
 */
describeEachDialect("replaying the events an endpoint missed on $name", (dialect) => {
  let t: TestApp;
  let ada: TestUser;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    ada = await t.user("user", "ada");
  });
  afterAll(async () => {
    await t?.close();
  });

  async function room(name: string): Promise<number> {
    const res = await t.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: ada.headers,
      payload: { name },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json<{ id: number }>().id;
  }

  async function post(roomId: number, content: string): Promise<number> {
    const res = await t.app.inject({
      method: "POST",
      url: `/api/rooms/${roomId}/messages`,
      headers: ada.headers,
      payload: { content },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json<{ id: number }>().id;
  }

  async function replay(webhookId: number, body: object): Promise<number> {
    const res = await admin(t, "POST", `/api/admin/webhooks/${webhookId}/replay-missing`, body);
    expect(res.statusCode, res.body).toBe(202);
    return res.json<{ queued: number }>().queued;
  }

  async function deliveries(webhookId: number) {
    return t.ctx.db
      .selectFrom("webhook_deliveries")
      .select(["id", "event_id", "body", "status", "room_id", "message_id"])
      .where("webhook_id", "=", webhookId)
      .orderBy("id")
      .execute();
  }

  const messageIdOf = (body: string) =>
    (JSON.parse(body) as { data: { messageId?: number } }).data.messageId;

  it("sends what a disabled, filtered or later endpoint missed, once, in event order, with the event ids it would have had", async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const general = await room("replay-general");
    const other = await room("replay-other");
    const endpoint = await createEndpoint(t, { events: ["MESSAGE_*"], roomIds: [general] });
    const m1 = await post(general, "heard");
    const m2 = await post(other, "filtered out");
    await admin(t, "PATCH", `/api/admin/webhooks/${endpoint.id}`, { enabled: false });
    const m3 = await post(general, "missed while disabled");
    await admin(t, "PATCH", `/api/admin/webhooks/${endpoint.id}`, {
      enabled: true,
      roomIds: null,
    });
    // A DM's messages are never kept: integrations do not hear them, then or later.
    const bob = await t.user("user", "bob-replay");
    const dm = await t.app.inject({
      method: "POST",
      url: "/api/dms",
      headers: ada.headers,
      payload: { userId: bob.id },
    });
    expect(dm.statusCode, dm.body).toBeLessThan(300);
    await post(dm.json<{ id: number }>().id, "private");
    const later = await createEndpoint(t, { events: ["MESSAGE_CREATED"] });

    const before = await deliveries(endpoint.id);
    expect(before.map((d) => messageIdOf(d.body))).toEqual([m1]);
    // Counted first, then sent: m2 (filtered by the room list since changed) and m3 (disabled).
    expect(await replay(endpoint.id, { since, dryRun: true })).toBe(2);
    expect(await deliveries(endpoint.id)).toHaveLength(1);
    expect(await replay(endpoint.id, { since })).toBe(2);
    const after = await deliveries(endpoint.id);
    expect(after.map((d) => messageIdOf(d.body))).toEqual([m1, m2, m3]);
    expect(after.slice(1).every((d) => d.status === "PENDING")).toBe(true);
    // Never twice: what was queued is not missing any more.
    expect(await replay(endpoint.id, { since })).toBe(0);

    // The endpoint created afterwards gets all three, as the fan-out would have sent them then:
    // the same event as the first endpoint's (one event id prefix), its own id at the end.
    expect(await replay(later.id, { since })).toBe(3);
    const late = await deliveries(later.id);
    expect(late.map((d) => messageIdOf(d.body))).toEqual([m1, m2, m3]);
    for (const [i, d] of late.entries()) {
      const envelope = JSON.parse(d.body) as {
        event: string;
        webhookId: number;
        timestamp: string;
      };
      const heard = JSON.parse(after[i]!.body) as typeof envelope;
      expect(envelope).toEqual({ ...heard, webhookId: later.id });
      expect(d.event_id).toBe(
        after[i]!.event_id!.slice(0, 20) + String(later.id).padStart(10, "0"),
      );
      expect(d.event_id).toMatch(/^evt_[0-9A-Z]{26}$/);
      expect({ room_id: d.room_id, message_id: d.message_id }).toEqual({
        room_id: after[i]!.room_id,
        message_id: after[i]!.message_id,
      });
    }
    // The original event of m1 kept its id at the first endpoint: a replay there sent nothing new.
    expect(after[0]).toEqual(before[0]);
  });

  it("takes only events its subscription hears now and of the range, and refuses a bad range", async () => {
    // Apart from the events of the tests before, and from each other, by a few milliseconds.
    await sleep(5);
    const since = Date.now();
    const endpoint = await createEndpoint(t, { events: ["ROOM_CREATED"], enabled: false });
    const r1 = await room("replay-range-1");
    await sleep(5);
    const r2 = await room("replay-range-2");
    await post(r1, "not subscribed");
    const [first] = await t.ctx.db
      .selectFrom("webhook_events")
      .select(["created_at"])
      .where("event", "=", "ROOM_CREATED")
      .where("room_id", "=", r2)
      .execute();
    // Until the second room's event: only the first room.
    expect(
      await replay(endpoint.id, {
        since: new Date(since).toISOString(),
        until: new Date(first!.created_at).toISOString(),
        dryRun: true,
      }),
    ).toBe(1);
    // Disabled: queued, and held until it is enabled.
    expect(await replay(endpoint.id, { since: new Date(since).toISOString() })).toBe(2);
    const log = await admin(t, "GET", `/api/admin/webhooks/${endpoint.id}/deliveries`);
    expect(
      log.json<{ items: Array<{ event: string; held: boolean }> }>().items.map((d) => d.held),
    ).toEqual([true, true]);

    const bad = await admin(t, "POST", `/api/admin/webhooks/${endpoint.id}/replay-missing`, {
      since: new Date().toISOString(),
      until: new Date(Date.now() - HOUR).toISOString(),
    });
    expect(bad.json()).toMatchObject({ status: 400, code: "invalid_time_range" });
    const unknown = await admin(t, "POST", `/api/admin/webhooks/999999/replay-missing`, {
      since: new Date().toISOString(),
    });
    expect(unknown.statusCode).toBe(404);
  });

  it("keeps events as long as deliveries: the retention job deletes both at the same age", async () => {
    const r = await room("replay-retention");
    const kept = await t.ctx.db
      .selectFrom("webhook_events")
      .select(["id"])
      .where("room_id", "=", r)
      .execute();
    expect(kept).toHaveLength(1);
    const run = await runDeliveryRetention(t.ctx, {
      retentionDays: t.ctx.config.deliveryRetentionDays,
      now: Date.now(),
    });
    expect(run.ran).toBe(true);
    expect(
      await t.ctx.db.selectFrom("webhook_events").select("id").where("room_id", "=", r).execute(),
    ).toHaveLength(1);
    // A day past the retention: gone.
    const later = await runDeliveryRetention(t.ctx, {
      retentionDays: t.ctx.config.deliveryRetentionDays,
      now: Date.now() + (t.ctx.config.deliveryRetentionDays + 1) * 24 * HOUR,
    });
    expect(later.events).toBeGreaterThanOrEqual(1);
    expect(
      await t.ctx.db.selectFrom("webhook_events").select("id").where("room_id", "=", r).execute(),
    ).toHaveLength(0);
  });
});
