import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { claimDeliveries } from "../../../src/webhooks/outbound/claim-deliveries.js";
import { recordAttempts } from "../../../src/webhooks/outbound/record-attempts.js";
import { DEFAULT_RETRY_POLICY } from "../../../src/webhooks/outbound/retry-schedule.js";
import type { AttemptOutcome } from "../../../src/webhooks/outbound/webhook-sender.js";
import { DIALECTS } from "../../helpers/dialects.js";
import { startReceiver, type Receiver } from "../../helpers/receiver.js";
import { recordingLog, startDeliveryApp, type DeliveryApp } from "./delivery-fixture.js";

const ok: AttemptOutcome = {
  ok: true,
  startedAt: new Date(),
  durationMs: 3,
  responseStatus: 204,
  responseBody: "",
  error: null,
};

async function receiver(): Promise<Receiver> {
  const started = await startReceiver();
  onTestFinished(() => started.close());
  return started;
}

describe.each(DIALECTS)("claiming and recording on $name", (dialect) => {
  // The dispatcher stays stopped: these tests drive the claim and the recorder by hand.
  let d: DeliveryApp;
  beforeAll(async () => {
    d = await startDeliveryApp(dialect, {}, { start: false });
  });
  afterAll(async () => {
    await d?.close();
  });
  beforeEach(async () => {
    // Every endpoint subscribes to the same event: start each test with none.
    await d.t.ctx.db.deleteFrom("webhooks").execute();
  });

  async function queue(count: number, url = "http://127.0.0.1:9/hook") {
    const endpoint = await d.endpoint(url);
    for (let i = 0; i < count; i++) await d.emitUser(`claim-${endpoint.id}-${i}`);
    return endpoint;
  }
  const claim = (workerId: string, limit: number, now = Date.now(), perEndpointLimit = 100) =>
    claimDeliveries(d.t.ctx.db, { limit, leaseMs: 10_000, workerId, now, perEndpointLimit });

  it("gives concurrent workers disjoint sets and leases every row to its taker", async () => {
    const endpoint = await queue(30);
    const [a, b, c] = await Promise.all([claim("a", 12), claim("b", 12), claim("c", 12)]);
    const ids = [...a, ...b, ...c].map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(30);
    for (const [worker, rows] of [
      ["a", a],
      ["b", b],
      ["c", c],
    ] as const) {
      for (const row of rows) {
        expect(row).toMatchObject({ webhook_id: endpoint.id, attempts: 0, status: "PENDING" });
        expect(row.url).toBe("http://127.0.0.1:9/hook");
        expect((await d.delivery(row.id)).locked_by).toBe(worker);
      }
    }
    // Leased rows are not due for anyone else until the lease runs out...
    expect(await claim("d", 50)).toHaveLength(0);
    // ...and are retaken after it (a crashed worker's claims come back).
    const retaken = await claim("d", 50, Date.now() + 10_001);
    expect(retaken.map((r) => r.id).sort((x, y) => x - y)).toEqual([...ids].sort((x, y) => x - y));
  });

  it("claims the oldest due rows first and leaves rows that are not due yet", async () => {
    const endpoint = await queue(3);
    const [first, second, third] = (await d.deliveries()).filter(
      (r) => r.webhook_id === endpoint.id,
    );
    const now = Date.now();
    await d.t.ctx.db
      .updateTable("webhook_deliveries")
      .set({ next_attempt_at: now + 60_000 })
      .where("id", "=", first!.id)
      .execute();
    await d.t.ctx.db
      .updateTable("webhook_deliveries")
      .set({ next_attempt_at: now - 5_000 })
      .where("id", "=", third!.id)
      .execute();
    const rows = await claim("x", 1, now);
    expect(rows.map((r) => r.id)).toEqual([third!.id]);
    expect((await claim("x", 10, now)).map((r) => r.id)).toEqual([second!.id]);
  });

  it("does not claim beyond an endpoint's free room, and skips endpoints at their cap", async () => {
    const busy = await queue(10);
    const other = await queue(3);
    const rows = await claimDeliveries(d.t.ctx.db, {
      limit: 20,
      leaseMs: 10_000,
      workerId: "cap",
      now: Date.now(),
      perEndpointLimit: 4,
      inFlightByEndpoint: new Map([[busy.id, 1]]),
    });
    expect(rows.filter((r) => r.webhook_id === busy.id)).toHaveLength(3);
    expect(rows.filter((r) => r.webhook_id === other.id)).toHaveLength(3);
    const none = await claimDeliveries(d.t.ctx.db, {
      limit: 20,
      leaseMs: 10_000,
      workerId: "cap",
      now: Date.now(),
      perEndpointLimit: 4,
      inFlightByEndpoint: new Map([[busy.id, 4]]),
    });
    expect(none).toHaveLength(0);
  });

  it("ignores the result of a worker whose lease ran out and was retaken", async () => {
    await queue(1);
    const [mine] = await claim("slow", 1);
    const [theirs] = await claim("fast", 1, Date.now() + 10_001);
    expect(theirs!.id).toBe(mine!.id);

    const late = await recordAttempts(
      d.t.ctx.db,
      [
        {
          deliveryId: mine!.id,
          attempt: 1,
          outcome: { ...ok, ok: false, responseStatus: 500, error: "receiver answered HTTP 500" },
        },
      ],
      {
        workerId: "slow",
        policy: DEFAULT_RETRY_POLICY,
        now: Date.now(),
      },
    );
    expect(late).toEqual([{ deliveryId: mine!.id, recorded: false }]);
    expect(await d.delivery(mine!.id)).toMatchObject({
      status: "PENDING",
      attempts: 0,
      locked_by: "fast",
    });
    expect(await d.attempts(mine!.id)).toHaveLength(0);

    const current = await recordAttempts(
      d.t.ctx.db,
      [{ deliveryId: theirs!.id, attempt: 1, outcome: ok }],
      {
        workerId: "fast",
        policy: DEFAULT_RETRY_POLICY,
        now: Date.now(),
      },
    );
    expect(current).toEqual([
      { deliveryId: theirs!.id, recorded: true, status: "SUCCESS", nextAttemptAt: null },
    ]);
    expect(await d.delivery(theirs!.id)).toMatchObject({
      status: "SUCCESS",
      attempts: 1,
      locked_by: null,
      locked_until: null,
      last_response_status: 204,
    });
  });

  it("records a failure as FAILED with the next attempt after the back-off", async () => {
    await queue(1);
    const [row] = await claim("w", 1);
    const now = Date.now();
    const [transition] = await recordAttempts(
      d.t.ctx.db,
      [
        {
          deliveryId: row!.id,
          attempt: 1,
          outcome: {
            ...ok,
            ok: false,
            responseStatus: 503,
            responseBody: "busy",
            error: "receiver answered HTTP 503",
          },
        },
      ],
      { workerId: "w", policy: DEFAULT_RETRY_POLICY, now },
    );
    expect(transition).toEqual({
      deliveryId: row!.id,
      recorded: true,
      status: "FAILED",
      nextAttemptAt: now + 30_000,
    });
    expect(await d.delivery(row!.id)).toMatchObject({
      status: "FAILED",
      attempts: 1,
      next_attempt_at: now + 30_000,
      last_response_status: 503,
      locked_by: null,
    });
    expect(await d.attempts(row!.id)).toMatchObject([
      {
        attempt: 1,
        response_status: 503,
        response_body: "busy",
        error: "receiver answered HTTP 503",
      },
    ]);
    // Not due before its time.
    expect(await claim("w", 10, now + 29_999)).toHaveLength(0);
    expect((await claim("w", 10, now + 30_000)).map((r) => [r.id, r.attempts, r.status])).toEqual([
      [row!.id, 1, "FAILED"],
    ]);
  });
});

describe.each(DIALECTS)("dispatcher on $name", (dialect) => {
  it("ends quietly when the endpoint is deleted while its delivery is being sent", async () => {
    const log = recordingLog();
    const d = await startDeliveryApp(dialect, {}, { log });
    onTestFinished(() => d.close());
    const target = await receiver();
    const endpoint = await d.endpoint(target.url);
    target.respondWith(async () => {
      // Deleting the endpoint drops its queued deliveries with it.
      await d.t.ctx.db.deleteFrom("webhooks").where("id", "=", endpoint.id).execute();
      return { status: 500, delayMs: 100 };
    });
    await d.emitUser("gone");
    await target.waitForRequests(1);
    await sleep(200);
    await d.dispatcher.idle();
    await sleep(700);
    expect(target.requests).toHaveLength(1);
    expect(await d.deliveries()).toHaveLength(0);
    expect(await d.t.ctx.db.selectFrom("webhook_attempts").selectAll().execute()).toHaveLength(0);
    expect(log.lines.filter((l) => l.level !== "info")).toEqual([]);
  });

  it("keeps sending to a fast endpoint while a slow one has used up its share", async () => {
    const d = await startDeliveryApp(dialect, {
      webhookTimeoutMs: 5_000,
      webhookConcurrency: 16,
      webhookPerEndpointConcurrency: 4,
    });
    const slow = await receiver();
    const fast = await receiver();
    onTestFinished(async () => {
      await slow.close();
      await d.close();
    });
    let open = 0;
    let most = 0;
    slow.respondWith(async () => {
      most = Math.max(most, ++open);
      await sleep(800);
      open--;
      return { status: 204 };
    });
    await d.endpoint(slow.url);
    await d.endpoint(fast.url, { events: ["ADMIN_USER_DELETED"] });
    // The slow endpoint's backlog is older, so it comes first in due order.
    for (let i = 0; i < 12; i++) await d.emitUser(`slow-${i}`);
    const started = Date.now();
    for (let i = 0; i < 10; i++)
      await d.emit("ADMIN_USER_DELETED", { username: `fast-${i}`, adminActor: "admin" });
    await fast.waitForRequests(10, 3_000);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(slow.requests.length).toBeLessThanOrEqual(4);
    expect(most).toBeLessThanOrEqual(4);
    // And the slow endpoint is served, four at a time, until its backlog is done.
    await slow.waitForRequests(12, 10_000);
    expect(most).toBe(4);
  }, 30_000);

  it("waits at stop for the attempts in flight and records them", async () => {
    const d = await startDeliveryApp(dialect);
    onTestFinished(() => d.t.close());
    const target = await receiver();
    target.respondWith(() => ({ status: 200, delayMs: 400 }));
    await d.endpoint(target.url);
    await d.emitUser("in-flight-at-stop");
    await target.waitForRequests(1);
    await d.dispatcher.stop();
    const [row] = await d.deliveries();
    expect(row).toMatchObject({ status: "SUCCESS", attempts: 1, locked_by: null });
    expect(await d.attempts(row!.id)).toHaveLength(1);
  });
});
