import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import type { DeliveryStatus } from "../../../../../src/db/schema.js";
import {
  RETENTION_BATCH,
  runDeliveryRetention,
  startRetentionJob,
} from "../../../../../src/webhooks/outbound/delivery-engine/retention-job.js";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { waitFor } from "../../../../helpers/wait-for.js";
import { startDeliveryApp, type DeliveryApp } from "./delivery-fixture.js";

const DAY = 24 * 60 * 60 * 1000;

describeEachDialect("delivery retention on $name", (dialect) => {
  let d: DeliveryApp;
  let webhookId: number;
  beforeAll(async () => {
    d = await startDeliveryApp(dialect, { deliveryRetentionDays: 30 }, { start: false });
    webhookId = (await d.endpoint("http://127.0.0.1:9/hook")).id;
  });
  afterAll(async () => {
    await d?.close();
  });
  beforeEach(async () => {
    await d.t.ctx.db.deleteFrom("webhook_deliveries").execute();
    await d.t.ctx.db.deleteFrom("job_locks").execute();
  });

  /** A delivery created `ageDays` ago in `status`, with one attempt row. */
  async function delivery(status: DeliveryStatus, ageDays: number): Promise<number> {
    const at = Date.now() - ageDays * DAY;
    const finished = status === "SUCCESS" || status === "EXHAUSTED";
    const { id } = await d.t.ctx.db
      .insertInto("webhook_deliveries")
      .values({
        webhook_id: webhookId,
        event: "ADMIN_USER_DISABLED",
        body: "{}",
        status,
        attempts: status === "PENDING" ? 0 : 1,
        next_attempt_at: finished ? null : at,
        locked_until: null,
        locked_by: null,
        last_response_status: null,
        created_at: at,
        updated_at: at,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    if (status !== "PENDING") {
      await d.t.ctx.db
        .insertInto("webhook_attempts")
        .values({
          delivery_id: id,
          attempt: 1,
          started_at: at,
          duration_ms: 5,
          response_status: 500,
          response_body: "",
          error: null,
        })
        .execute();
    }
    return id;
  }

  /** `count` SUCCESS deliveries created 40 days ago, without attempts, inserted 500 at a time. */
  async function expiredSuccesses(count: number): Promise<void> {
    const at = Date.now() - 40 * DAY;
    const rows = Array.from({ length: count }, () => ({
      webhook_id: webhookId,
      event: "ADMIN_USER_DISABLED",
      body: "{}",
      status: "SUCCESS" as const,
      attempts: 1,
      next_attempt_at: null,
      locked_until: null,
      locked_by: null,
      last_response_status: 204,
      created_at: at,
      updated_at: at,
    }));
    for (let i = 0; i < rows.length; i += 500)
      await d.t.ctx.db
        .insertInto("webhook_deliveries")
        .values(rows.slice(i, i + 500))
        .execute();
  }

  const remaining = async () =>
    (await d.t.ctx.db.selectFrom("webhook_deliveries").select("id").orderBy("id").execute()).map(
      (r) => r.id,
    );
  const attemptsOf = async (ids: number[]) =>
    d.t.ctx.db
      .selectFrom("webhook_attempts")
      .select("delivery_id")
      .where("delivery_id", "in", ids)
      .execute();

  it("deletes finished deliveries older than the retention with their attempts, and keeps everything else", async () => {
    const oldSuccess = await delivery("SUCCESS", 31);
    const oldExhausted = await delivery("EXHAUSTED", 45);
    const oldFailed = await delivery("FAILED", 31);
    const oldPending = await delivery("PENDING", 60);
    const recentSuccess = await delivery("SUCCESS", 29);

    const result = await runDeliveryRetention(d.t.ctx, { retentionDays: 30, now: Date.now() });
    expect(result).toEqual({ ran: true, deleted: 2, events: 0 });
    expect(await remaining()).toEqual([oldFailed, oldPending, recentSuccess]);
    expect(await attemptsOf([oldSuccess, oldExhausted])).toEqual([]);
    expect(await attemptsOf([oldFailed, recentSuccess])).toHaveLength(2);
  });

  it("deletes in batches until nothing old is left", async () => {
    await expiredSuccesses(2_500);
    // Timers must run between the batches (the event loop is not held for the whole deletion,
    // which on SQLite's synchronous driver would stall every request of the process).
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 0);
    const run = runDeliveryRetention(d.t.ctx, { retentionDays: 30, now: Date.now() });
    const ticksDuringRun = await run.then(
      () => ticks,
      () => ticks,
    );
    clearInterval(ticker);
    expect(await run).toEqual({ ran: true, deleted: 2_500, events: 0 });
    expect(ticksDuringRun).toBeGreaterThanOrEqual(Math.floor(2_500 / RETENTION_BATCH) - 1);
    expect(await remaining()).toEqual([]);
  });

  it("ends a run early when asked to stop, leaving the rest for the next run", async () => {
    await expiredSuccesses(RETENTION_BATCH * 2);
    const first = await runDeliveryRetention(d.t.ctx, {
      retentionDays: 30,
      now: Date.now(),
      stopping: () => true,
    });
    expect(first).toEqual({ ran: true, deleted: RETENTION_BATCH, events: 0 });
    expect(await remaining()).toHaveLength(RETENTION_BATCH);
    expect(await runDeliveryRetention(d.t.ctx, { retentionDays: 30, now: Date.now() })).toEqual({
      ran: true,
      deleted: RETENTION_BATCH,
      events: 0,
    });
  });

  it("skips the run while another process holds the job", async () => {
    await delivery("SUCCESS", 31);
    if (dialect.name === "postgres") {
      // Another session holding the advisory lock.
      await d.t.ctx.db.connection().execute(async (conn) => {
        await sql`SELECT pg_advisory_lock(${0x7061726c657901n.toString()}::bigint)`.execute(conn);
        try {
          expect(
            await runDeliveryRetention(d.t.ctx, { retentionDays: 30, now: Date.now() }),
          ).toEqual({ ran: false, deleted: 0, events: 0 });
        } finally {
          await sql`SELECT pg_advisory_unlock(${0x7061726c657901n.toString()}::bigint)`.execute(
            conn,
          );
        }
      });
    } else {
      await d.t.ctx.db
        .insertInto("job_locks")
        .values({
          name: "delivery-retention",
          locked_until: Date.now() + 60_000,
          last_run_at: Date.now(),
        })
        .execute();
      expect(await runDeliveryRetention(d.t.ctx, { retentionDays: 30, now: Date.now() })).toEqual({
        ran: false,
        deleted: 0,
        events: 0,
      });
      await d.t.ctx.db
        .updateTable("job_locks")
        .set({ locked_until: Date.now() - 1 })
        .execute();
    }
    expect(await runDeliveryRetention(d.t.ctx, { retentionDays: 30, now: Date.now() })).toEqual({
      ran: true,
      deleted: 1,
      events: 0,
    });
  });

  it("runs by itself shortly after start", async () => {
    const old = await delivery("EXHAUSTED", 31);
    const keep = await delivery("SUCCESS", 1);
    const job = startRetentionJob(d.t.ctx, { firstRunDelayMs: 10 });
    try {
      await waitFor("the first run", async () => !(await remaining()).includes(old));
      expect(await remaining()).toEqual([keep]);
    } finally {
      await job.stop();
    }
  });
});
