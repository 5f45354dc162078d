import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../../../helpers/build-app.js";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { createEndpoint } from "../../../../helpers/fixtures.js";
import { admin, insertDelivery } from "./webhook-fixtures.js";

/**
 * Sending again by a delivery's id alone (POST /api/admin/deliveries/{deliveryId}/redeliver) and
 * by an event's id (POST /api/admin/events/{eventId}/resend), without a dispatcher: what they
 * queue stays PENDING, so the rows show exactly what was queued.
 */
describeEachDialect("redelivering by delivery id and resending by event id on $name", (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(async () => {
    await t?.close();
  });

  let events = 0;
  const eventId = () => `evt_RESENDTEST${String(++events).padStart(16, "0")}`;

  async function row(id: number) {
    return t.ctx.db
      .selectFrom("webhook_deliveries")
      .select(["id", "webhook_id", "event_id", "status", "body"])
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
  }

  it("redelivers a delivery named by its id alone, same bytes, and names its endpoint", async () => {
    const { id: webhookId } = await createEndpoint(t);
    const event = eventId();
    const original = await insertDelivery(t, webhookId, {
      status: "EXHAUSTED",
      attempts: 5,
      nextAttemptAt: null,
      eventId: event,
    });
    const res = await admin(t, "POST", `/api/admin/deliveries/${original}/redeliver`);
    expect(res.statusCode, res.body).toBe(202);
    const answer = res.json<{ webhookId: number; deliveryId: number }>();
    expect(answer).toEqual({ webhookId, deliveryId: expect.any(Number) });
    expect(answer.deliveryId).toBeGreaterThan(original);
    const [copy, first] = [await row(answer.deliveryId), await row(original)];
    expect(copy).toMatchObject({ webhook_id: webhookId, event_id: event, status: "PENDING" });
    expect(copy.body).toBe(first.body);
    expect(first.status).toBe("EXHAUSTED");

    const missing = await admin(t, "POST", "/api/admin/deliveries/999999999/redeliver");
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: "not_found", detail: "no delivery 999999999" });
  });

  it("resends an event by its id from its first delivery, same bytes", async () => {
    const [a, other] = [await createEndpoint(t), await createEndpoint(t)];
    const event = eventId();
    const first = await insertDelivery(t, a.id, { status: "EXHAUSTED", eventId: event });
    await insertDelivery(t, a.id, { status: "SUCCESS", eventId: event }); // a redelivery of it
    await insertDelivery(t, other.id, { status: "SUCCESS", eventId: eventId() });

    const res = await admin(t, "POST", `/api/admin/events/${event}/resend`);
    expect(res.statusCode, res.body).toBe(202);
    const resent = res.json<{ eventId: string; webhookId: number; deliveryId: number }>();
    expect(resent).toEqual({ eventId: event, webhookId: a.id, deliveryId: expect.any(Number) });
    const copy = await row(resent.deliveryId);
    expect(copy).toMatchObject({ webhook_id: a.id, event_id: event, status: "PENDING" });
    expect(copy.body).toBe((await row(first)).body);

    const unknown = await admin(t, "POST", "/api/admin/events/evt_nothing/resend");
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({
      code: "not_found",
      detail: "no delivery of event evt_nothing",
    });
  });

  it("is for admins only", async () => {
    const user = await t.user("user");
    for (const url of ["/api/admin/deliveries/1/redeliver", "/api/admin/events/evt_x/resend"]) {
      const res = await t.app.inject({ method: "POST", url, headers: user.headers, payload: {} });
      expect(res.statusCode, url).toBe(403);
    }
  });
});
