/** An endpoint's 7-day success-rate trend: 24-hour windows ending now, oldest first. */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { apiFor, insertEndpoint } from "../../helpers/fixtures.js";

const DAY = 86_400_000;

describeEachDialect("endpoint health trend on $name", (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });

  /** Records an attempt `ago` ms before now, answered `status` (null: no answer). */
  async function attempt(webhookId: number, ago: number, status: number | null): Promise<void> {
    const now = Date.now();
    const delivery = await t.ctx.db
      .insertInto("webhook_deliveries")
      .values({
        webhook_id: webhookId,
        event: "MESSAGE_CREATED",
        body: "{}",
        status: status !== null && status < 300 ? "SUCCESS" : "FAILED",
        attempts: 1,
        created_at: now - ago,
        updated_at: now - ago,
        next_attempt_at: null,
        locked_until: null,
        locked_by: null,
        last_response_status: status,
        room_id: null,
        message_id: null,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    await t.ctx.db
      .insertInto("webhook_attempts")
      .values({
        delivery_id: delivery.id,
        webhook_id: webhookId,
        attempt: 1,
        started_at: now - ago,
        duration_ms: 12,
        response_status: status,
        response_body: null,
        error: status === null ? "connection refused" : null,
        request_headers: null,
        response_headers: null,
      })
      .execute();
  }

  it("counts each 24 hours' attempts and successes, oldest first, the last window the health's 24 h", async () => {
    const { id } = await insertEndpoint(t);
    await attempt(id, 6.5 * DAY, 200);
    await attempt(id, 6.5 * DAY, 500);
    await attempt(id, 2.2 * DAY, null);
    await attempt(id, 1000, 204);
    await attempt(id, 2000, 204);
    await attempt(id, 3000, 503);
    await attempt(id, 8 * DAY, 200); // older than the week: not counted
    const { data } = await apiFor(t)("GET /api/admin/webhooks/{id}/health", { id });
    expect(data.webhookId).toBe(id);
    expect(data.days).toHaveLength(7);
    expect(data.days.map((d) => [d.attempts, d.successes])).toEqual([
      [2, 1],
      [0, 0],
      [0, 0],
      [0, 0],
      [1, 0],
      [0, 0],
      [3, 2],
    ]);
    expect(data.days.map((d) => d.successRate)).toEqual([0.5, null, null, null, 0, null, 2 / 3]);
    for (const [i, day] of data.days.entries()) {
      expect(Date.parse(day.end) - Date.parse(day.start)).toBe(DAY);
      if (i > 0) expect(day.start).toBe(data.days[i - 1]!.end);
    }
    expect(Math.abs(Date.parse(data.days[6]!.end) - Date.now())).toBeLessThan(60_000);
    const { data: webhook } = await apiFor(t)("GET /api/admin/webhooks/{id}", { id });
    expect(webhook.health.attempts24h).toBe(3);
  });

  it("answers 404 for an unknown endpoint", async () => {
    const res = await t.app.inject({
      method: "GET",
      url: "/api/admin/webhooks/999999/health",
      headers: t.admin.headers,
    });
    expect(res.statusCode).toBe(404);
  });
});
