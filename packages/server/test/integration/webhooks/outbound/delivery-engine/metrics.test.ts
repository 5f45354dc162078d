import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outcomeKind } from "../../../../../src/webhooks/outbound/delivery-engine/delivery-metrics.js";
import type { AttemptOutcome } from "../../../../../src/webhooks/outbound/transport/webhook-sender.js";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { startReceiver, type Receiver } from "../../../../helpers/receiver.js";
import { waitFor } from "../../../../helpers/wait-for.js";
import { startDeliveryApp, type DeliveryApp } from "./delivery-fixture.js";

describeEachDialect("delivery metrics on $name", (dialect) => {
  let d: DeliveryApp;
  let target: Receiver;
  beforeAll(async () => {
    d = await startDeliveryApp(dialect, { webhookMaxAttempts: 2 });
    target = await startReceiver();
  });
  afterAll(async () => {
    await d?.close();
    await target?.close();
  });

  async function scrape(): Promise<string> {
    const res = await d.t.app.inject({ method: "GET", url: "/metrics" });
    expect(res.statusCode).toBe(200);
    return res.body;
  }
  function value(text: string, series: string): number | undefined {
    const line = text.split("\n").find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  }

  it("counts deliveries by final state and attempts by outcome, with their latency", async () => {
    // "ok-after-retry": 500 then 204 -> SUCCESS; "never": 503 twice -> EXHAUSTED (2 attempts max).
    target.respondWith((req) => {
      const user = JSON.parse(req.body.toString()).data.username;
      const seen = target.requests.filter(
        (r) => JSON.parse(r.body.toString()).data.username === user,
      ).length;
      return user === "ok-after-retry" && seen > 1
        ? { status: 204 }
        : { status: user === "ok-after-retry" ? 500 : 503 };
    });
    await d.endpoint(target.url);
    await d.endpoint("http://parley-metrics.invalid/hook");
    await d.emitUser("ok-after-retry");
    await d.emitUser("never");
    await waitFor("every delivery finished", async () =>
      (await d.deliveries()).every((r) => r.status === "SUCCESS" || r.status === "EXHAUSTED"),
    );

    const text = await scrape();
    expect(value(text, 'parley_webhook_deliveries_total{state="success"}')).toBe(1);
    expect(value(text, 'parley_webhook_deliveries_total{state="exhausted"}')).toBe(3);
    expect(value(text, 'parley_webhook_attempts_total{outcome="success"}')).toBe(1);
    expect(value(text, 'parley_webhook_attempts_total{outcome="http_error"}')).toBe(3);
    expect(value(text, 'parley_webhook_attempts_total{outcome="dns_error"}')).toBe(4);
    expect(value(text, 'parley_webhook_attempt_duration_seconds_count{outcome="http_error"}')).toBe(
      3,
    );
    expect(text).toContain("# TYPE parley_webhook_attempt_duration_seconds histogram");
  });

  it("reports the due queue and the age of its oldest row, read at scrape time", async () => {
    expect(value(await scrape(), "parley_webhook_queue_depth")).toBe(0);
    expect(value(await scrape(), "parley_webhook_oldest_due_age_seconds")).toBe(0);

    const held = await d.endpoint(target.url, { enabled: false });
    const at = Date.now() - 90_000;
    for (let i = 0; i < 3; i++) {
      await d.t.ctx.db
        .insertInto("webhook_deliveries")
        .values({
          webhook_id: held.id,
          event: "ADMIN_USER_DISABLED",
          body: "{}",
          status: "PENDING",
          attempts: 0,
          next_attempt_at: at + i,
          locked_until: null,
          locked_by: null,
          last_response_status: null,
          created_at: at,
          updated_at: at,
        })
        .execute();
    }
    const text = await scrape();
    expect(value(text, "parley_webhook_queue_depth")).toBe(3);
    expect(value(text, "parley_webhook_oldest_due_age_seconds")).toBeGreaterThanOrEqual(90);
    expect(value(text, "parley_webhook_oldest_due_age_seconds")).toBeLessThan(120);
  });
});

describe("attempt outcome labels", () => {
  const failed = (error: string, responseStatus: number | null = null): AttemptOutcome => ({
    ok: false,
    startedAt: new Date(),
    durationMs: 1,
    responseStatus,
    responseBody: responseStatus === null ? null : "",
    error,
  });

  it("sorts the sender's failures into one label each", () => {
    expect(outcomeKind({ ...failed(""), ok: true, error: null, responseStatus: 204 })).toBe(
      "success",
    );
    expect(outcomeKind(failed("receiver answered HTTP 503", 503))).toBe("http_error");
    expect(outcomeKind(failed("receiver answered HTTP 302; redirects are not followed", 302))).toBe(
      "http_error",
    );
    expect(outcomeKind(failed("timed out after 1000 ms waiting for the response"))).toBe("timeout");
    expect(outcomeKind(failed("timed out after 1000 ms reading the response body", 200))).toBe(
      "timeout",
    );
    expect(outcomeKind(failed("connect timed out after 5000 ms"))).toBe("timeout");
    expect(outcomeKind(failed("DNS lookup failed for x.invalid: ENOTFOUND"))).toBe("dns_error");
    expect(outcomeKind(failed("target refused: 10.0.0.1 is a private address"))).toBe("refused");
    expect(outcomeKind(failed("TLS error: self-signed certificate"))).toBe("tls_error");
    expect(outcomeKind(failed("connection refused (ECONNREFUSED) to 127.0.0.1:9"))).toBe(
      "connection_error",
    );
    expect(outcomeKind(failed("connection reset (ECONNRESET) to 127.0.0.1:9"))).toBe(
      "connection_error",
    );
  });
});
