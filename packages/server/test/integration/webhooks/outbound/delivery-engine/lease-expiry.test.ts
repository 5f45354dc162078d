import { sql } from "kysely";
import { expect, it, onTestFinished } from "vitest";
import { claimDeliveries } from "../../../../../src/webhooks/outbound/delivery-engine/claim-deliveries.js";
import { nextDueTime } from "../../../../../src/webhooks/outbound/delivery-engine/next-due-time.js";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { startReceiver, type Receiver } from "../../../../helpers/receiver.js";
import { waitFor } from "../../../../helpers/wait-for.js";
import { startDeliveryApp, type DeliveryApp } from "./delivery-fixture.js";

/** Longer than any test here: only the retry timer (and the lease watch) can start a send. */
const NO_SWEEP = 600_000;

async function receiver(): Promise<Receiver> {
  const started = await startReceiver();
  onTestFinished(() => started.close());
  return started;
}

/** The dispatcher's LISTEN connection is up (PostgreSQL). */
async function listening(d: DeliveryApp): Promise<boolean> {
  const { rows } = await sql<{ pid: number }>`
    SELECT pid FROM pg_stat_activity
    WHERE application_name = ${`parley-deliveries ${d.t.ctx.instanceId}`} AND query LIKE 'LISTEN%'
  `.execute(d.t.ctx.db);
  return rows.length > 0;
}

/** Leases a delivery to another process, as its claim would, without waking this dispatcher. */
async function leaseElsewhere(d: DeliveryApp, id: number, until: number): Promise<void> {
  await d.t.ctx.db
    .updateTable("webhook_deliveries")
    .set({ locked_by: "a-process-that-died", locked_until: until })
    .where("id", "=", id)
    .execute();
}

describeEachDialect("lease expiry on $name", (dialect) => {
  it("answers the end of the earliest running lease, whoever holds it, as the next due time", async () => {
    const d = await startDeliveryApp(dialect, {}, { start: false });
    onTestFinished(() => d.close());
    await d.endpoint("http://127.0.0.1:9/hook");
    for (const name of ["leased", "retry", "lease-over"]) await d.emitUser(name);
    const [leased, retry, over] = await d.deliveries();
    const now = Date.now();
    await leaseElsewhere(d, leased!.id, now + 5_000);
    await d.t.ctx.db
      .updateTable("webhook_deliveries")
      .set({ status: "FAILED", attempts: 1, next_attempt_at: now + 20_000 })
      .where("id", "=", retry!.id)
      .execute();
    // A lease that has run out is no wake-up: its row is due now, and the claim takes it.
    await leaseElsewhere(d, over!.id, now - 1);

    // The claim takes a row once `locked_until < now`: the lease's end plus one millisecond.
    expect(await nextDueTime(d.t.ctx.db, now)).toBe(now + 5_001);
    expect(await nextDueTime(d.t.ctx.db, now + 5_000)).toBe(now + 5_001);
    const claim = (at: number) =>
      claimDeliveries(d.t.ctx.db, {
        limit: 10,
        leaseMs: 60_000,
        workerId: "me",
        now: at,
        perEndpointLimit: 10,
      });
    expect((await claim(now + 5_000)).map((row) => row.id)).toEqual([over!.id]);
    expect((await claim(now + 5_001)).map((row) => row.id)).toEqual([leased!.id]);
    // Both now leased to "me" until a minute later; the retry comes first.
    expect(await nextDueTime(d.t.ctx.db, now + 5_001)).toBe(now + 20_000);
  });

  it("claims a delivery leased by a process that died when the lease runs out, not at the sweep", async () => {
    const d = await startDeliveryApp(
      dialect,
      { webhookSweepIntervalMs: NO_SWEEP },
      { start: false },
    );
    onTestFinished(() => d.close());
    const target = await receiver();
    await d.endpoint(target.url);
    await d.emitUser("held-by-a-dead-process");
    const [row] = await d.deliveries();
    const leaseEnd = Date.now() + 500;
    await leaseElsewhere(d, row!.id, leaseEnd);

    d.dispatcher.start();
    const [request] = await target.waitForRequests(1, 5_000);
    expect(request!.receivedAt).toBeGreaterThan(leaseEnd);
    await d.dispatcher.idle();
    expect(await d.delivery(row!.id)).toMatchObject({ status: "SUCCESS", attempts: 1 });
  });

  it("sees a lease another process took after its last look-up, and claims the row when it runs out", async () => {
    // The lease watch looks every half lease (here 500 ms): the sweep never runs in the test.
    const d = await startDeliveryApp(
      dialect,
      { webhookSweepIntervalMs: NO_SWEEP },
      { leaseMs: 1_000, start: false },
    );
    onTestFinished(() => d.close());
    const target = await receiver();
    await d.endpoint(target.url);
    await d.emitUser("claimed-elsewhere");
    const [row] = await d.deliveries();
    // A retry ten minutes away when the dispatcher starts: its look-up arms the timer for then.
    await d.t.ctx.db
      .updateTable("webhook_deliveries")
      .set({ status: "FAILED", attempts: 1, next_attempt_at: Date.now() + 600_000 })
      .where("id", "=", row!.id)
      .execute();
    d.dispatcher.start();
    // On PostgreSQL the LISTEN connection's first pass looks up too: let it be done with. Then
    // two look-ups that start after this point: the lease watch's, every half lease.
    if (dialect.name === "postgres") await waitFor("the LISTEN connection", () => listening(d));
    let looked = false;
    void d.queue.sweepsDone(2).then(() => (looked = true));
    await waitFor("two look-ups of the next due time (the lease watch's)", () => looked, 5_000);

    // Then another process takes the delivery (due again, as after a redelivery, and claimed
    // there) and dies: nothing of that wakes this dispatcher.
    const leaseEnd = Date.now() + 1_500;
    await d.t.ctx.db
      .updateTable("webhook_deliveries")
      .set({
        next_attempt_at: Date.now(),
        locked_by: "a-process-that-died",
        locked_until: leaseEnd,
      })
      .where("id", "=", row!.id)
      .execute();

    const [request] = await target.waitForRequests(1, 5_000);
    expect(request!.receivedAt).toBeGreaterThan(leaseEnd);
    expect(d.timesClaimed(row!.id)).toBe(1);
  });
});
