import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { FAST_KNOBS } from "../../../../helpers/knobs.js";
import { latch } from "../../../../helpers/latch.js";
import { startReceiver, type Receiver } from "../../../../helpers/receiver.js";
import { waitFor } from "../../../../helpers/wait-for.js";
import { startDeliveryApp, type DeliveryApp, type DeliveryRow } from "./delivery-fixture.js";

const BASE = FAST_KNOBS.webhookBackoffBaseMs;
const CEILING = FAST_KNOBS.webhookBackoffMaxMs;

describeEachDialect("delivery state machine on $name", (dialect) => {
  let d: DeliveryApp;
  beforeAll(async () => {
    d = await startDeliveryApp(dialect);
  });
  afterAll(async () => {
    await d?.close();
  });

  async function receiver(): Promise<Receiver> {
    const started = await startReceiver();
    onTestFinished(() => started.close());
    return started;
  }

  /** Registers an endpoint at `url`, emits one event to it and returns its delivery row id. */
  async function deliverOne(url: string, username: string): Promise<number> {
    const endpoint = await d.endpoint(url);
    await d.emitUser(username);
    const rows = (await d.deliveries()).filter((r) => r.webhook_id === endpoint.id);
    expect(rows).toHaveLength(1);
    return rows[0]!.id;
  }

  function until(id: number, status: DeliveryRow["status"], timeoutMs = 10_000) {
    return waitFor(
      `delivery ${id} ${status}`,
      async () => {
        const row = await d.delivery(id);
        return row.status === status && row;
      },
      timeoutMs,
    );
  }

  it("retries four failures with back-off and ends SUCCESS after the fifth attempt, with the whole history", async () => {
    // An app of its own whose sweep never runs in the test: the retry timer alone starts retries.
    const timerOnly = await startDeliveryApp(dialect, { webhookSweepIntervalMs: 600_000 });
    onTestFinished(() => timerOnly.close());
    const target = await receiver();
    target.respondWith((_req, i) =>
      i < 4
        ? { status: [500, 503, 429, 502][i]!, body: `failure ${i + 1}` }
        : { status: 200, body: "ok" },
    );
    const endpoint = await timerOnly.endpoint(target.url);
    await timerOnly.emitUser("retry-then-ok");
    const [row] = (await timerOnly.deliveries()).filter((r) => r.webhook_id === endpoint.id);
    const id = row!.id;
    const done = await waitFor("delivery SUCCESS", async () => {
      const current = await timerOnly.delivery(id);
      return current.status === "SUCCESS" && current;
    });
    expect(done).toMatchObject({
      attempts: 5,
      next_attempt_at: null,
      last_response_status: 200,
      locked_by: null,
    });

    const history = await timerOnly.attempts(id);
    expect(history.map((a) => [a.attempt, a.response_status, a.response_body])).toEqual([
      [1, 500, "failure 1"],
      [2, 503, "failure 2"],
      [3, 429, "failure 3"],
      [4, 502, "failure 4"],
      [5, 200, "ok"],
    ]);
    expect(history.slice(0, 4).map((a) => a.error)).toEqual([
      "receiver answered HTTP 500",
      "receiver answered HTTP 503",
      "receiver answered HTTP 429",
      "receiver answered HTTP 502",
    ]);
    expect(history[4]!.error).toBeNull();

    // Retries send the very same bytes with the very same signature.
    const requests = target.requests;
    expect(requests).toHaveLength(5);
    for (const request of requests) {
      expect(request.body.equals(requests[0]!.body)).toBe(true);
      expect(request.headers["x-webhook-signature-256"]).toBe(
        requests[0]!.headers["x-webhook-signature-256"],
      );
    }

    // Attempt n comes no sooner than min(base * 2^(n-2), ceiling) after the one before: the
    // back-off is counted from when the failure was recorded, after the answer arrived.
    for (let n = 2; n <= 5; n++) {
      const scheduled = Math.min(BASE * 2 ** (n - 2), CEILING);
      const gap = requests[n - 1]!.receivedAt - requests[n - 2]!.receivedAt;
      expect(gap, `gap before attempt ${n}`).toBeGreaterThanOrEqual(scheduled);
    }
  });

  it("ends EXHAUSTED after exactly five failed attempts and never tries a sixth", async () => {
    const target = await receiver();
    target.respondWith(() => ({ status: 500 }));
    const id = await deliverOne(target.url, "always-fails");
    const done = await until(id, "EXHAUSTED");
    expect(done).toMatchObject({
      attempts: 5,
      next_attempt_at: null,
      last_response_status: 500,
      locked_by: null,
    });
    // Finished rows are never due: sweeps that ran after it was recorded did not claim it again.
    await d.queue.sweepsDone(2);
    expect(d.timesClaimed(id)).toBe(5);
    expect(target.requests).toHaveLength(5);
    expect((await d.attempts(id)).map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5]);
    expect(await d.delivery(id)).toMatchObject({ status: "EXHAUSTED", attempts: 5 });
  });

  it("counts a receiver that answers after the time-out as a failed attempt, then retries", async () => {
    const target = await receiver();
    const hold = latch();
    onTestFinished(() => hold.release());
    // The first request is held until its attempt is recorded: only the time-out can end it.
    target.respondWith(async (_req, i) => {
      if (i === 0) await hold.opened;
      return { status: i === 0 ? 200 : 204 };
    });
    const id = await deliverOne(target.url, "slow-once");
    const [first] = await waitFor("the first attempt", async () => {
      const attempts = await d.attempts(id);
      return attempts.length > 0 && attempts;
    });
    expect(target.requests).toHaveLength(1);
    hold.release();
    expect(first).toMatchObject({ attempt: 1, response_status: null, response_body: null });
    expect(first!.error).toMatch(/timed out after 1000 ms/);
    expect(first!.duration_ms).toBeGreaterThanOrEqual(990);
    await until(id, "SUCCESS");
    const [, second] = await d.attempts(id);
    expect(second).toMatchObject({ attempt: 2, response_status: 204, error: null });
  });

  it("records a refused connection as a failed attempt without a response", async () => {
    const closed = net.createServer().listen(0, "127.0.0.1");
    await new Promise((resolve) => closed.once("listening", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));

    const id = await deliverOne(`http://127.0.0.1:${port}/hook`, "refused");
    await until(id, "EXHAUSTED");
    const history = await d.attempts(id);
    expect(history).toHaveLength(5);
    for (const attempt of history) {
      expect(attempt).toMatchObject({ response_status: null, response_body: null });
      expect(attempt.error).toMatch(/connection refused \(ECONNREFUSED\) to 127\.0\.0\.1:\d+/);
    }
    expect((await d.delivery(id)).last_response_status).toBeNull();
  });

  it("records a DNS failure as a failed attempt", async () => {
    const id = await deliverOne("http://parley-no-such-host.invalid/hook", "dns");
    await waitFor("first attempt", async () => (await d.attempts(id)).length > 0);
    const [first] = await d.attempts(id);
    expect(first).toMatchObject({ attempt: 1, response_status: null });
    expect(first!.error).toMatch(/^DNS lookup failed for parley-no-such-host\.invalid/);
    expect((await d.delivery(id)).status).not.toBe("SUCCESS");
  });

  it("counts a redirect as a failure and does not follow it", async () => {
    const elsewhere = await receiver();
    const target = await receiver();
    target.respondWith((_req, i) =>
      i === 0 ? { status: 302, headers: { location: elsewhere.url } } : { status: 204 },
    );
    const id = await deliverOne(target.url, "redirected");
    await until(id, "SUCCESS");
    const [first] = await d.attempts(id);
    expect(first).toMatchObject({ attempt: 1, response_status: 302 });
    expect(first!.error).toMatch(/redirects are not followed/);
    expect(elsewhere.requests).toHaveLength(0);
  });

  it("stores at most 2048 bytes of a 10 KB response body", async () => {
    const target = await receiver();
    const big = "x".repeat(10 * 1024);
    target.respondWith((_req, i) => (i === 0 ? { status: 500, body: big } : { status: 204 }));
    const id = await deliverOne(target.url, "big-body");
    await until(id, "SUCCESS");
    const [first] = await d.attempts(id);
    expect(first!.response_status).toBe(500);
    expect(Buffer.byteLength(first!.response_body!, "utf8")).toBe(2048);
    expect(big.startsWith(first!.response_body!)).toBe(true);
  });
});
