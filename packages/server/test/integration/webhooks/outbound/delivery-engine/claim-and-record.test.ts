import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, expect, it, onTestFinished } from "vitest";
import { claimDeliveries } from "../../../../../src/webhooks/outbound/delivery-engine/claim-deliveries.js";
import { recordAttempts } from "../../../../../src/webhooks/outbound/delivery-engine/record-attempts.js";
import { DEFAULT_RETRY_POLICY } from "../../../../../src/webhooks/outbound/delivery-engine/backoff-schedule.js";
import type { AttemptOutcome } from "../../../../../src/webhooks/outbound/transport/webhook-sender.js";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { latch } from "../../../../helpers/latch.js";
import { startReceiver, type Receiver } from "../../../../helpers/receiver.js";
import { waitFor } from "../../../../helpers/wait-for.js";
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

describeEachDialect("claiming and recording on $name", (dialect) => {
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

  it("does not claim beyond an endpoint's room, and skips endpoints without room", async () => {
    const busy = await queue(10);
    const other = await queue(3);
    const rows = await claimDeliveries(d.t.ctx.db, {
      limit: 20,
      leaseMs: 10_000,
      workerId: "cap",
      now: Date.now(),
      perEndpointLimit: 4,
      roomByEndpoint: new Map([[busy.id, 3]]),
    });
    expect(rows.filter((r) => r.webhook_id === busy.id)).toHaveLength(3);
    expect(rows.filter((r) => r.webhook_id === other.id)).toHaveLength(3);
    const none = await claimDeliveries(d.t.ctx.db, {
      limit: 20,
      leaseMs: 10_000,
      workerId: "cap",
      now: Date.now(),
      perEndpointLimit: 4,
      roomByEndpoint: new Map([[busy.id, 0]]),
    });
    expect(none).toHaveLength(0);
  });

  it("shares a claim among endpoints in a round robin, first attempts before retries", async () => {
    const backlog = await queue(6, "http://127.0.0.1:9/backlog");
    const late = await queue(2, "http://127.0.0.1:9/late");
    const now = Date.now() + 1;
    // The endpoint with the older backlog does not take the claim: two rows each.
    const shared = await claim("rr", 4, now);
    const byEndpoint = (rows: { webhook_id: number }[], id: number) =>
      rows.filter((r) => r.webhook_id === id).length;
    expect([byEndpoint(shared, backlog.id), byEndpoint(shared, late.id)]).toEqual([2, 2]);

    // The backlog's rows become due retries, older than the next event's first attempts.
    await queue(1, "http://127.0.0.1:9/fresh");
    await d.t.ctx.db
      .updateTable("webhook_deliveries")
      .set({ attempts: 1, status: "FAILED", locked_until: null, locked_by: null })
      .where("webhook_id", "=", backlog.id)
      .execute();
    const [first] = await claim("rr", 1, Date.now() + 1);
    expect(first!.attempts).toBe(0);
    expect(first!.webhook_id).not.toBe(backlog.id);
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

  it("counts in the endpoint's health only the attempts of a batch it could record", async () => {
    const endpoint = await queue(2);
    const mine = await claim("slow", 2);
    expect(mine).toHaveLength(2);
    // One row's lease ran out and another worker took it: its result is not ours to write.
    const [lost] = await claim("fast", 1, Date.now() + 10_001);
    const kept = mine.find((row) => row.id !== lost!.id);
    const failed = { ...ok, ok: false, responseStatus: 500, error: "receiver answered HTTP 500" };
    const result = await recordAttempts(
      d.t.ctx.db,
      [
        { deliveryId: kept!.id, attempt: 1, outcome: failed, webhookId: endpoint.id },
        { deliveryId: lost!.id, attempt: 1, outcome: failed, webhookId: endpoint.id },
      ],
      {
        workerId: "slow",
        policy: DEFAULT_RETRY_POLICY,
        now: Date.now(),
        autoDisable: { minFailures: 2, afterMs: 1 },
      },
    );
    expect(result.map((r) => r.recorded)).toEqual([true, false]);
    expect(await d.attempts(kept!.id)).toHaveLength(1);
    expect(await d.attempts(lost!.id)).toHaveLength(0);
    const row = await d.t.ctx.db
      .selectFrom("webhooks")
      .select(["consecutive_failures", "enabled"])
      .where("id", "=", endpoint.id)
      .executeTakeFirstOrThrow();
    // One failure written, not two: under the rule's two, so the endpoint stays enabled.
    expect(row).toEqual({ consecutive_failures: 1, enabled: 1 });
  });

  it("clears a run of failures from the successes of a batch whose other lease was lost", async () => {
    const endpoint = await queue(2);
    await d.t.ctx.db
      .updateTable("webhooks")
      .set({ consecutive_failures: 3, failing_since: Date.now() - 60_000 })
      .where("id", "=", endpoint.id)
      .execute();
    const mine = await claim("slow", 2);
    const [lost] = await claim("fast", 1, Date.now() + 10_001);
    const kept = mine.find((row) => row.id !== lost!.id);
    const result = await recordAttempts(
      d.t.ctx.db,
      [
        { deliveryId: kept!.id, attempt: 1, outcome: ok, webhookId: endpoint.id },
        { deliveryId: lost!.id, attempt: 1, outcome: ok, webhookId: endpoint.id },
      ],
      { workerId: "slow", policy: DEFAULT_RETRY_POLICY, now: Date.now() },
    );
    expect(result.map((r) => r.recorded)).toEqual([true, false]);
    expect(await d.attempts(lost!.id)).toHaveLength(0);
    const row = await d.t.ctx.db
      .selectFrom("webhooks")
      .select(["consecutive_failures", "failing_since", "last_success_at"])
      .where("id", "=", endpoint.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      consecutive_failures: 0,
      failing_since: null,
      last_success_at: ok.startedAt.getTime(),
    });
  });

  it("disables an endpoint in the recording that brings its run of failures to the rule", async () => {
    const endpoint = await queue(2);
    const rows = await claim("w", 2);
    const failed = (at: number): AttemptOutcome => ({
      ...ok,
      ok: false,
      startedAt: new Date(at),
      responseStatus: 500,
      error: "receiver answered HTTP 500",
    });
    const now = Date.now();
    const disabled: number[] = [];
    await recordAttempts(
      d.t.ctx.db,
      rows.map((r, i) => ({
        deliveryId: r.id,
        attempt: 1,
        outcome: failed(now - 60_000 + i),
        webhookId: endpoint.id,
      })),
      {
        workerId: "w",
        policy: DEFAULT_RETRY_POLICY,
        now,
        autoDisable: { minFailures: 2, afterMs: 30_000 },
        async endpointsDisabled(_trx, list) {
          disabled.push(...list.map((e) => e.webhookId));
        },
      },
    );
    expect(disabled).toEqual([endpoint.id]);
    const row = await d.t.ctx.db
      .selectFrom("webhooks")
      .select(["consecutive_failures", "enabled", "disabled_reason"])
      .where("id", "=", endpoint.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ consecutive_failures: 2, enabled: 0, disabled_reason: "auto_failing" });
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

  it("records a batch of mixed outcomes in one call, each row by its own transition", async () => {
    await queue(5);
    const rows = await claim("w", 5);
    expect(rows).toHaveLength(5);
    const [succeeded, retried, exhausted, retaken, deleted] = rows.map((row) => row.id) as [
      number,
      number,
      number,
      number,
      number,
    ];
    // Another worker holds one of them now, and one is gone with its endpoint's cleanup.
    await d.t.ctx.db
      .updateTable("webhook_deliveries")
      .set({ locked_by: "other" })
      .where("id", "=", retaken)
      .execute();
    await d.t.ctx.db.deleteFrom("webhook_deliveries").where("id", "=", deleted).execute();

    const failed = (status: number): AttemptOutcome => ({
      ...ok,
      ok: false,
      responseStatus: status,
      responseBody: `answered ${status}`,
      error: `receiver answered HTTP ${status}`,
    });
    const now = Date.now();
    const transitions = await recordAttempts(
      d.t.ctx.db,
      [
        { deliveryId: succeeded, attempt: 1, outcome: ok },
        { deliveryId: retried, attempt: 2, outcome: failed(503) },
        { deliveryId: exhausted, attempt: 5, outcome: failed(500) },
        { deliveryId: retaken, attempt: 1, outcome: ok },
        { deliveryId: deleted, attempt: 1, outcome: ok },
      ],
      { workerId: "w", policy: DEFAULT_RETRY_POLICY, now },
    );
    expect(transitions).toEqual([
      { deliveryId: succeeded, recorded: true, status: "SUCCESS", nextAttemptAt: null },
      { deliveryId: retried, recorded: true, status: "FAILED", nextAttemptAt: now + 60_000 },
      { deliveryId: exhausted, recorded: true, status: "EXHAUSTED", nextAttemptAt: null },
      { deliveryId: retaken, recorded: false },
      { deliveryId: deleted, recorded: false },
    ]);

    expect(await d.delivery(succeeded)).toMatchObject({
      status: "SUCCESS",
      attempts: 1,
      next_attempt_at: null,
      last_response_status: 204,
      locked_by: null,
    });
    expect(await d.delivery(retried)).toMatchObject({
      status: "FAILED",
      attempts: 2,
      next_attempt_at: now + 60_000,
      last_response_status: 503,
      locked_by: null,
    });
    expect(await d.delivery(exhausted)).toMatchObject({
      status: "EXHAUSTED",
      attempts: 5,
      next_attempt_at: null,
      last_response_status: 500,
      locked_by: null,
    });
    // The retaken row keeps its new owner's state; nothing was written for it.
    expect(await d.delivery(retaken)).toMatchObject({
      status: "PENDING",
      attempts: 0,
      locked_by: "other",
    });
    expect(await d.attempts(retaken)).toEqual([]);
    // One attempt row for each delivery that was recorded, with its own outcome.
    const written = await d.t.ctx.db
      .selectFrom("webhook_attempts")
      .select(["delivery_id", "attempt", "response_status", "response_body", "error"])
      .where("delivery_id", "in", [succeeded, retried, exhausted, retaken, deleted])
      .orderBy("delivery_id")
      .execute();
    expect(written).toEqual([
      { delivery_id: succeeded, attempt: 1, response_status: 204, response_body: "", error: null },
      {
        delivery_id: retried,
        attempt: 2,
        response_status: 503,
        response_body: "answered 503",
        error: "receiver answered HTTP 503",
      },
      {
        delivery_id: exhausted,
        attempt: 5,
        response_status: 500,
        response_body: "answered 500",
        error: "receiver answered HTTP 500",
      },
    ]);
  });
});

describeEachDialect("dispatcher on $name", (dialect) => {
  it("ends quietly when the endpoint is deleted while its delivery is being sent", async () => {
    const log = recordingLog();
    const d = await startDeliveryApp(dialect, {}, { log });
    onTestFinished(() => d.close());
    const target = await receiver();
    const endpoint = await d.endpoint(target.url);
    target.respondWith(async () => {
      // Deleting the endpoint drops its queued deliveries with it.
      await d.t.ctx.db.deleteFrom("webhooks").where("id", "=", endpoint.id).execute();
      return { status: 500 };
    });
    await d.emitUser("gone");
    const [request] = await target.waitForRequests(1);
    expect(JSON.parse(request!.body.toString()).webhookId).toBe(endpoint.id);
    // Idle: the answer is recorded (as nothing, the row being gone). Two more claims (sweeps)
    // find nothing to retry.
    await d.dispatcher.idle();
    await d.queue.claimsDone(2);
    expect(target.requests).toHaveLength(1);
    expect(d.queue.claimed).toHaveLength(1);
    expect(await d.deliveries()).toHaveLength(0);
    expect(await d.t.ctx.db.selectFrom("webhook_attempts").selectAll().execute()).toHaveLength(0);
    expect(log.lines.filter((l) => l.level !== "info")).toEqual([]);
  });

  it("keeps sending to a fast endpoint while a slow one has used up its window", async () => {
    const d = await startDeliveryApp(dialect, {
      // Longer than the test: only the test's release ends the slow endpoint's attempts.
      webhookTimeoutMs: 60_000,
      webhookConcurrency: 16,
      webhookPerEndpointConcurrency: 4,
    });
    const slow = await receiver();
    const fast = await receiver();
    const hold = latch();
    onTestFinished(async () => {
      hold.release();
      await slow.close();
      await d.close();
    });
    let open = 0;
    let most = 0;
    let answered = 0;
    slow.respondWith(async () => {
      // Three quick answers widen its window from one send to four; then it hangs.
      if (answered < 3) {
        answered++;
        return { status: 204 };
      }
      most = Math.max(most, ++open);
      await hold.opened;
      open--;
      return { status: 204 };
    });
    const busy = await d.endpoint(slow.url);
    await d.endpoint(fast.url, { events: ["ADMIN_USER_DELETED"] });
    // The slow endpoint's backlog is older, so it comes first in due order.
    for (let i = 0; i < 15; i++) await d.emitUser(`slow-${i}`);
    await waitFor("four held", () => open === 4);
    for (let i = 0; i < 10; i++)
      await d.emit("ADMIN_USER_DELETED", { username: `fast-${i}`, adminActor: "admin" });
    await fast.waitForRequests(10);
    // All ten went out while the slow endpoint's four were held, and no claim took a fifth of its
    // deliveries (a claim is what starts a send).
    expect(open).toBe(4);
    expect(d.queue.claimed.filter((row) => row.webhook_id === busy.id)).toHaveLength(3 + 4);
    expect(slow.requests).toHaveLength(3 + 4);
    // Released, the slow endpoint is served, four at a time, until its backlog is done.
    hold.release();
    await slow.waitForRequests(15);
    expect(most).toBe(4);
  });

  it("holds one send at a time to an endpoint that has not answered yet", async () => {
    const d = await startDeliveryApp(dialect, {
      webhookTimeoutMs: 60_000,
      webhookPerEndpointConcurrency: 8,
    });
    const hanging = await receiver();
    const hold = latch();
    onTestFinished(async () => {
      hold.release();
      await hanging.close();
      await d.close();
    });
    hanging.respondWith(async () => {
      await hold.opened;
      return { status: 204 };
    });
    await d.endpoint(hanging.url);
    for (let i = 0; i < 6; i++) await d.emitUser(`new-${i}`);
    await hanging.waitForRequests(1);
    await d.queue.sweepsDone(2);
    expect(hanging.requests).toHaveLength(1);
    hold.release();
    await hanging.waitForRequests(6);
  });

  it("waits at stop for the attempts in flight and records them", async () => {
    const d = await startDeliveryApp(dialect);
    onTestFinished(() => d.t.close());
    const target = await receiver();
    const hold = latch();
    target.respondWith(async () => {
      await hold.opened;
      return { status: 200 };
    });
    await d.endpoint(target.url);
    await d.emitUser("in-flight-at-stop");
    await target.waitForRequests(1);
    // The attempt is still held by the receiver when stop() is called.
    const stopping = d.dispatcher.stop();
    hold.release();
    await stopping;
    const [row] = await d.deliveries();
    expect(row).toMatchObject({ status: "SUCCESS", attempts: 1, locked_by: null });
    expect(await d.attempts(row!.id)).toHaveLength(1);
  });

  it("never has more attempts in flight than the send slots, across endpoints, without wait slots", async () => {
    const d = await startDeliveryApp(dialect, {
      // Longer than the test: only the test's release ends the held attempts.
      webhookTimeoutMs: 60_000,
      webhookConcurrency: 3,
      webhookPerEndpointConcurrency: 8,
      webhookWaitSlots: 0,
    });
    // Four endpoints, each with a window of one until it answers: four could go, three may.
    const targets = [await receiver(), await receiver(), await receiver(), await receiver()];
    const hold = latch();
    onTestFinished(async () => {
      hold.release();
      await d.close();
    });
    let open = 0;
    let most = 0;
    for (const target of targets) {
      target.respondWith(async () => {
        most = Math.max(most, ++open);
        await hold.opened;
        open--;
        return { status: 204 };
      });
      await d.endpoint(target.url);
    }
    const sent = () => targets.reduce((n, target) => n + target.requests.length, 0);
    for (let i = 0; i < 3; i++) await d.emitUser(`cap-${i}`);
    await waitFor("three attempts held", () => open === 3);
    // Every slot is taken: two sweeps later, no claim has taken a fourth row.
    await d.queue.sweepsDone(2);
    expect(d.queue.claimed).toHaveLength(3);
    expect(sent()).toBe(3);
    hold.release();
    await waitFor("all twelve delivered", () => sent() === 12);
    expect(most).toBe(3);
  });

  it("stops claiming while recording falls behind, and retries the recording until it succeeds", async () => {
    const log = recordingLog();
    const d = await startDeliveryApp(
      dialect,
      { webhookConcurrency: 2, webhookPerEndpointConcurrency: 2, webhookWaitSlots: 0 },
      { log },
    );
    onTestFinished(() => d.close());
    const target = await receiver();
    await d.endpoint(target.url);
    // With the attempts table away, every recording fails and answers pile up unrecorded.
    await sql`ALTER TABLE webhook_attempts RENAME TO webhook_attempts_away`.execute(d.t.ctx.db);
    for (let i = 0; i < 8; i++) await d.emitUser(`behind-${i}`);

    await target.waitForRequests(4);
    await waitFor("a failed recording", () =>
      log.lines.some((l) => l.message === "webhook dispatcher could not record attempts; retrying"),
    );
    // Backpressure: at most twice the concurrency unrecorded. Two sweeps later, no claim has
    // taken a fifth row.
    await d.queue.sweepsDone(2);
    expect(d.queue.claimed).toHaveLength(4);
    expect(target.requests).toHaveLength(4);

    await sql`ALTER TABLE webhook_attempts_away RENAME TO webhook_attempts`.execute(d.t.ctx.db);
    await waitFor("every delivery SUCCESS", async () => {
      const rows = await d.deliveries();
      return rows.length === 8 && rows.every((row) => row.status === "SUCCESS");
    });
    // The recording was retried, not the sends: each delivery reached the receiver once.
    expect(target.requests).toHaveLength(8);
    const usernames = target.requests.map((r) => JSON.parse(r.body.toString()).data.username);
    expect(new Set(usernames).size).toBe(8);
    for (const row of await d.deliveries()) expect(await d.attempts(row.id)).toHaveLength(1);
  });

  it("retries claiming after a database error and delivers once the database answers", async () => {
    const log = recordingLog();
    const d = await startDeliveryApp(dialect, {}, { log, start: false });
    onTestFinished(() => d.close());
    const target = await receiver();
    await d.endpoint(target.url);
    await d.emitUser("claimed-after-an-error");
    await sql`ALTER TABLE webhook_deliveries RENAME TO webhook_deliveries_away`.execute(d.t.ctx.db);
    d.dispatcher.start();
    await waitFor("a failed claim", () => d.queue.claimFailures > 0);
    expect(log.lines.map((l) => l.message)).toContain(
      "webhook dispatcher could not claim deliveries; retrying",
    );

    await sql`ALTER TABLE webhook_deliveries_away RENAME TO webhook_deliveries`.execute(d.t.ctx.db);
    const [request] = await target.waitForRequests(1);
    expect(JSON.parse(request!.body.toString()).data.username).toBe("claimed-after-an-error");
    await waitFor("the recovery logged", () =>
      log.lines.some((l) => l.message === "webhook dispatcher reached the database again"),
    );
  });
});
