import { onTestFinished, expect, it } from "vitest";
import { describeEachDialect, type TestDialect } from "../../../../helpers/dialects.js";
import { latch } from "../../../../helpers/latch.js";
import { startReceiver, type Receiver } from "../../../../helpers/receiver.js";
import { waitFor } from "../../../../helpers/wait-for.js";
import { startDeliveryApp, type DeliveryApp } from "./delivery-fixture.js";

async function receiver(): Promise<Receiver> {
  const started = await startReceiver();
  onTestFinished(() => started.close());
  return started;
}

/** One gauge or counter sample from the app's /metrics. */
async function metric(d: DeliveryApp, line: string): Promise<number> {
  const text = await d.t.app.metrics.registry.metrics();
  const found = text.split("\n").find((l) => l.startsWith(`${line} `));
  return found === undefined ? 0 : Number(found.slice(line.length + 1));
}

async function circuitOf(d: DeliveryApp, webhookId: number): Promise<string> {
  const row = await d.t.ctx.db
    .selectFrom("webhooks")
    .select("circuit")
    .where("id", "=", webhookId)
    .executeTakeFirstOrThrow();
  return row.circuit;
}

/**
 * A delivery app with a 4 s time-out and the given send slots (4 per endpoint), and a latch that
 * holds receivers until the test ends.
 */
async function appWithHold(dialect: TestDialect, concurrency: number) {
  const d = await startDeliveryApp(dialect, {
    webhookTimeoutMs: 4_000,
    webhookConcurrency: concurrency,
    webhookPerEndpointConcurrency: 4,
  });
  onTestFinished(() => d.close());
  const hold = latch();
  onTestFinished(() => hold.release());
  return { d, hold };
}

describeEachDialect("fair sending on $name", (dialect) => {
  it("delivers to a healthy endpoint at once while four endpoints hang", async () => {
    // The old rule: 8 send slots, 4 per endpoint; four hanging endpoints held them all until the
    // 4 s time-out, so the healthy endpoint's deliveries waited for it.
    const { d, hold } = await appWithHold(dialect, 8);
    const hanging: Receiver[] = [];
    for (let i = 0; i < 4; i++) {
      const target = await receiver();
      target.respondWith(async () => {
        await hold.opened;
        return { status: 204 };
      });
      await d.endpoint(target.url);
      hanging.push(target);
    }
    const healthy = await receiver();
    await d.endpoint(healthy.url);

    const emittedAt: number[] = [];
    for (let i = 0; i < 10; i++) {
      emittedAt.push(Date.now());
      await d.emitUser(`fair-${i}`);
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    const arrived = await healthy.waitForRequests(10, 2_000);
    const latencies = arrived.map((request) => {
      const username = JSON.parse(request.body.toString()).data.username as string;
      return request.receivedAt - emittedAt[Number(username.slice("fair-".length))]!;
    });
    // Each well within the time-out the hanging ones hold their sends for.
    expect(Math.max(...latencies)).toBeLessThan(1_500);
    // A receiver that never answered holds one send at a time, in a wait slot.
    for (const target of hanging) expect(target.requests).toHaveLength(1);
    // (A healthy delivery's outcome reaches the engine a moment after the receiver saw it: the
    // send slots empty once the last ones are back.)
    await waitFor(
      "the healthy endpoint's sends to end",
      async () =>
        (await metric(d, 'parley_webhook_sends_in_flight{pool="send",circuit="closed"}')) === 0,
      2_000,
    );
    expect(await metric(d, 'parley_webhook_sends_in_flight{pool="wait",circuit="closed"}')).toBe(4);
  });

  it("moves a send out longer than the slow threshold to a wait slot, freeing its send slot", async () => {
    // One send slot. An endpoint that answered once has it; then it hangs: 250 ms later the
    // send leaves the slot and another endpoint's delivery goes.
    const { d, hold } = await appWithHold(dialect, 1);
    const slow = await receiver();
    slow.respondWith(async (_request, index) => {
      if (index > 0) await hold.opened;
      return { status: 204 };
    });
    const first = await d.endpoint(slow.url);
    await d.emitUser("warm-up");
    await slow.waitForRequests(1);
    await waitFor(
      "the answer recorded",
      async () => (await d.deliveries())[0]?.status === "SUCCESS",
    );

    const other = await receiver();
    await d.endpoint(other.url, { events: ["ADMIN_USER_DELETED"] });
    await d.emitUser("hangs");
    await slow.waitForRequests(2);
    const sentAt = Date.now();
    await d.emit("ADMIN_USER_DELETED", { username: "next", adminActor: "admin" });
    const [request] = await other.waitForRequests(1, 2_000);
    expect(request!.receivedAt - sentAt).toBeLessThan(2_000);
    expect(await circuitOf(d, first.id)).toBe("closed");
  });

  it("opens the circuit after three time-outs in a row, keeps the rest unattempted, probes one at a time, and closes on an answer", async () => {
    // Time-out 300 ms; back-off base 1 s, so the circuit's first cool-down is 1 s, then 2 s.
    const d = await startDeliveryApp(dialect, {
      webhookTimeoutMs: 300,
      webhookBackoffBaseMs: 1_000,
      webhookBackoffMaxMs: 10_000,
    });
    onTestFinished(() => d.close());
    const target = await receiver();
    let alive = false;
    target.respondWith(async () => {
      if (alive) return { status: 204 };
      await new Promise((resolve) => setTimeout(resolve, 600));
      return { status: 204 };
    });
    const endpoint = await d.endpoint(target.url);
    for (let i = 0; i < 6; i++) await d.emitUser(`breaker-${i}`);

    // Three attempts, one at a time, each timed out: the circuit opens. (The circuit's state and
    // the third attempt's record are written apart: wait for both.)
    let seen = "";
    await waitFor(
      () => `the circuit open (${target.requests.length} requests; ${seen})`,
      async () => {
        const rows = await d.deliveries();
        seen = JSON.stringify(rows.map((r) => [r.status, r.attempts]));
        return (
          (await circuitOf(d, endpoint.id)) === "open" &&
          rows.filter((row) => row.attempts > 0).length >= 3
        );
      },
    );
    expect(target.requests).toHaveLength(3);
    expect(await metric(d, 'parley_webhook_circuits{state="open"}')).toBe(1);
    expect(await metric(d, 'parley_webhook_circuit_changes_total{state="open"}')).toBe(1);
    const waiting = (await d.deliveries()).filter((row) => row.attempts === 0);
    expect(waiting).toHaveLength(3);

    // After the cool-down, one probe (it times out too), then nothing for the doubled cool-down.
    await target.waitForRequests(4, 3_000);
    await waitFor("the probe failed", async () => (await circuitOf(d, endpoint.id)) === "open");
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(target.requests).toHaveLength(4);
    // One at a time: each went after the one before had timed out (300 ms); the probe after the
    // cool-down (1 s).
    const gaps = target.requests
      .slice(1)
      .map((r, i) => r.receivedAt - target.requests[i]!.receivedAt);
    expect(Math.min(...gaps.slice(0, 2))).toBeGreaterThanOrEqual(250);
    expect(gaps[2]).toBeGreaterThanOrEqual(900);

    // The receiver is back: the next probe is answered, the circuit closes, everything goes.
    alive = true;
    await waitFor(
      "every delivery SUCCESS",
      async () => (await d.deliveries()).every((row) => row.status === "SUCCESS"),
      10_000,
    );
    expect(await circuitOf(d, endpoint.id)).toBe("closed");
    expect(await metric(d, 'parley_webhook_circuit_changes_total{state="closed"}')).toBe(1);
    // The deliveries that waited while the circuit was open were attempted once, when it closed
    // (the probe's own delivery apart), never while the receiver was down.
    const rows = await d.deliveries();
    const probedOrWaited = rows.filter((row) => waiting.some((w) => w.id === row.id));
    expect(probedOrWaited.map((row) => row.attempts).sort()).toEqual([1, 1, 2]);
  });
});
