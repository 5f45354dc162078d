import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOpenTelemetry, type Tracing } from "../../../../../src/tracing/open-telemetry.js";
import { describeEachDialect, SQLITE } from "../../../../helpers/dialects.js";
import { createRoom } from "../../../../helpers/fixtures.js";
import { createWebhook } from "../../inbound/inbound-helpers.js";
import { startReceiver, type Receiver } from "../../../../helpers/receiver.js";
import { waitFor } from "../../../../helpers/wait-for.js";
import { startOperatingApp, type OperatingApp } from "./operating-fixture.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

function partsOf(header: string | undefined) {
  const match = TRACEPARENT.exec(header ?? "");
  expect(match, `a traceparent, not ${header}`).not.toBeNull();
  return { traceId: match![1]!, spanId: match![2]!, flags: match![3]! };
}

async function post(d: OperatingApp, roomId: number, content: string, headers = {}) {
  const res = await d.t.app.inject({
    method: "POST",
    url: `/api/rooms/${roomId}/messages`,
    headers: { ...d.t.admin.headers, ...headers },
    payload: { content },
  });
  expect(res.statusCode).toBe(201);
  return res.json().id as number;
}

describeEachDialect("trace context on $name", (dialect) => {
  let d: OperatingApp;
  beforeAll(async () => {
    d = await startOperatingApp(dialect);
  });
  afterAll(() => d?.close());

  it("continues the trace of the request that caused the event, with a span of its own per attempt, on retries and redelivery", async () => {
    const receiver = await d.receiver();
    receiver.respondWith((_req, i) => ({ status: i === 0 ? 503 : 204 }));
    const endpoint = await d.create({
      url: receiver.url,
      events: ["MESSAGE_CREATED"],
      traceContext: true,
    });
    expect(endpoint.traceContext).toBe(true);
    const room = await createRoom(d.t, d.t.admin, "traced");
    await post(d, room.id, "traced post", {
      traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01`,
      tracestate: "vendor=abc",
    });
    const [first, second] = await receiver.waitForRequests(2);
    const a = partsOf(first!.headers.traceparent);
    const b = partsOf(second!.headers.traceparent);
    expect(a.traceId).toBe(TRACE_ID);
    expect(b.traceId).toBe(TRACE_ID);
    expect(a.flags).toBe("01");
    // Each attempt is its own span: neither the caller's nor the other attempt's.
    expect(new Set([a.spanId, b.spanId, CALLER_SPAN]).size).toBe(3);
    expect(first!.headers.tracestate).toBe("vendor=abc");
    // The attempt log shows what was sent.
    const list = await d.api("GET", `/api/admin/webhooks/${endpoint.id}/deliveries`);
    const deliveryId = list.json().items[0].id as number;
    const detail = await waitFor("both attempts recorded", async () => {
      const res = await d.api("GET", `/api/admin/webhooks/${endpoint.id}/deliveries/${deliveryId}`);
      const body = res.json() as {
        attemptHistory: Array<{ requestHeaders: Record<string, string> }>;
      };
      return body.attemptHistory.length === 2 ? body : undefined;
    });
    expect(detail.attemptHistory[0]!.requestHeaders.traceparent).toMatch(TRACE_ID);
    const again = await d.api(
      "POST",
      `/api/admin/webhooks/${endpoint.id}/deliveries/${deliveryId}/redeliver`,
    );
    expect(again.statusCode).toBe(202);
    const [, , third] = await receiver.waitForRequests(3);
    expect(partsOf(third!.headers.traceparent).traceId).toBe(TRACE_ID);
  });

  it("continues the trace of a write route that carries it in the request's context (joining a room) as of one that hands it down (posting), side by side", async () => {
    const receiver = await d.receiver();
    await d.create({
      url: receiver.url,
      events: ["USER_JOINED_ROOM", "MESSAGE_CREATED"],
      traceContext: true,
    });
    const room = await createRoom(d.t, d.t.admin, "joined traced");
    const member = await d.t.user("user");
    const joinTrace = "5" + TRACE_ID.slice(1);
    const postTrace = "6" + TRACE_ID.slice(1);
    // Both at once: each unit of work takes its own request's trace, never the other's.
    const [joined, posted] = await Promise.all([
      d.t.app.inject({
        method: "POST",
        url: `/api/rooms/${room.id}/join`,
        headers: { ...member.headers, traceparent: `00-${joinTrace}-${CALLER_SPAN}-01` },
      }),
      post(d, room.id, "posted beside a join", {
        traceparent: `00-${postTrace}-${CALLER_SPAN}-01`,
      }),
    ]);
    expect(joined.statusCode).toBe(200);
    expect(posted).toBeGreaterThan(0);
    const requests = await receiver.waitForRequests(2);
    const traceOf = (event: string) => {
      const request = requests.find((r) => JSON.parse(r.body.toString("utf8")).event === event);
      return partsOf(request!.headers.traceparent).traceId;
    };
    expect(traceOf("USER_JOINED_ROOM")).toBe(joinTrace);
    expect(traceOf("MESSAGE_CREATED")).toBe(postTrace);
  });

  it("continues the trace of a post through each inbound route: Parley's, Slack's, Discord's and Stripe's form", async () => {
    const receiver = await d.receiver();
    await d.create({ url: receiver.url, events: ["MESSAGE_CREATED"], traceContext: true });
    const hook = await createWebhook(d.t, { displayName: "traced bot" });
    const token = hook.token;
    const routes: Array<[trace: string, url: string, payload: unknown]> = [
      ["7", `/api/public/webhooks/ingest/${token}`, { content: "via ingest" }],
      ["8", `/api/public/webhooks/ingest/${token}/slack`, { text: "via slack" }],
      ["9", `/api/public/discord/v10/webhooks/${hook.id}/${token}`, { content: "via discord" }],
      [
        "a",
        `/api/public/webhooks/ingest/${token}/stripe`,
        { id: "evt_traced", type: "customer.created", data: { object: {} } },
      ],
    ];
    for (const [digit, url, payload] of routes) {
      const res = await d.t.app.inject({
        method: "POST",
        url,
        headers: {
          "content-type": "application/json",
          traceparent: `00-${digit + TRACE_ID.slice(1)}-${CALLER_SPAN}-01`,
        },
        payload: JSON.stringify(payload),
      });
      expect(res.statusCode, `${url}: ${res.body}`).toBeLessThan(300);
    }
    const requests = await receiver.waitForRequests(routes.length);
    const traces = requests.map((r) => partsOf(r.headers.traceparent).traceId).sort();
    expect(traces).toEqual(routes.map(([digit]) => digit + TRACE_ID.slice(1)).sort());
  });

  it("starts a trace for a request without one (or with an invalid one), shared by every endpoint of the event", async () => {
    const one = await d.receiver();
    const two = await d.receiver();
    for (const receiver of [one, two])
      await d.create({ url: receiver.url, events: ["MESSAGE_CREATED"], traceContext: true });
    const room = await createRoom(d.t, d.t.admin, "untraced");
    await post(d, room.id, "no trace here", {
      traceparent: `00-${"0".repeat(32)}-${CALLER_SPAN}-01`,
    });
    const [x] = await one.waitForRequests(1);
    const [y] = await two.waitForRequests(1);
    const traceId = partsOf(x!.headers.traceparent).traceId;
    expect(traceId).not.toBe("0".repeat(32));
    expect(partsOf(y!.headers.traceparent).traceId).toBe(traceId);
    expect(x!.headers.tracestate).toBeUndefined();
  });

  it("sends no traceparent when traceContext is off, and refuses it as a custom header", async () => {
    const receiver = await d.receiver();
    const endpoint = await d.create({ url: receiver.url, events: ["MESSAGE_CREATED"] });
    expect(endpoint.traceContext).toBe(false);
    const room = await createRoom(d.t, d.t.admin, "off");
    await post(d, room.id, "quiet", { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` });
    const [request] = await receiver.waitForRequests(1);
    expect(request!.headers.traceparent).toBeUndefined();
    for (const name of ["traceparent", "tracestate"]) {
      const res = await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, {
        headers: { [name]: "x" },
      });
      expect(res.json().code).toBe("header_reserved");
    }
  });
});

/** An OTLP/HTTP receiver: what the OpenTelemetry SDK's exporter posts to /v1/traces (JSON). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
}

function spansOf(receiver: Receiver): OtlpSpan[] {
  return receiver.requests.flatMap((request) => {
    const body = JSON.parse(request.body.toString("utf8")) as {
      resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
    };
    return body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
  });
}

function attribute(span: OtlpSpan, key: string): unknown {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value && Object.values(value)[0];
}

describe("OpenTelemetry export to an OTLP/HTTP receiver", () => {
  let collector: Receiver;
  let tracing: Tracing;
  let d: OperatingApp;
  beforeAll(async () => {
    collector = await startReceiver();
    collector.respondWith(() => ({
      status: 200,
      body: "{}",
      headers: { "content-type": "application/json" },
    }));
    tracing = (await startOpenTelemetry({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url.replace(/\/hook$/, ""),
      OTEL_SERVICE_NAME: "parley-test",
    }))!;
    d = await startOperatingApp(SQLITE, {}, { tracing });
  });
  afterAll(async () => {
    await d?.close();
    await tracing?.shutdown();
    await collector?.close();
  });

  it("exports the request's server span and a webhook.deliver client span per attempt, as its child, named in the attempt's traceparent", async () => {
    const receiver = await d.receiver();
    receiver.respondWith((_req, i) => ({ status: i === 0 ? 500 : 204 }));
    const endpoint = await d.create({
      url: `${receiver.url}?token=secret`,
      events: ["MESSAGE_CREATED"],
      traceContext: true,
    });
    const room = await createRoom(d.t, d.t.admin, "exported");
    await post(d, room.id, "exported post", { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` });
    const attempts = await receiver.waitForRequests(2);
    // A span ends once its answer is in: flush until the second attempt's has been exported.
    const spans = await waitFor("both attempts' spans exported", async () => {
      await tracing.flush();
      const traced = spansOf(collector).filter((span) => span.traceId === TRACE_ID);
      return traced.filter((span) => span.name === "webhook.deliver").length === 2
        ? traced
        : undefined;
    });
    expect(collector.requests[0]!.path).toBe("/v1/traces");
    const server = spans.find((span) => span.name === "POST /api/rooms/:roomId/messages");
    expect(server, JSON.stringify(spans.map((s) => s.name))).toBeDefined();
    expect(server!.parentSpanId).toBe(CALLER_SPAN);
    expect(server!.kind).toBe(2); // SERVER
    expect(attribute(server!, "http.response.status_code")).toBe(201);
    const deliver = spans.filter((span) => span.name === "webhook.deliver");
    expect(deliver).toHaveLength(2);
    for (const [i, span] of deliver.entries()) {
      expect(span.kind).toBe(3); // CLIENT
      expect(span.parentSpanId).toBe(server!.spanId);
      expect(attribute(span, "parley.webhook.id")).toBe(endpoint.id);
      expect(attribute(span, "parley.event.type")).toBe("MESSAGE_CREATED");
      expect(attribute(span, "parley.event.id")).toMatch(/^evt_/);
      expect(attribute(span, "parley.delivery.attempt")).toBe(i + 1);
      expect(attribute(span, "url.full")).toBe(receiver.url);
      expect(attribute(span, "http.response.status_code")).toBe(i === 0 ? 500 : 204);
    }
    // The span id each attempt's traceparent names is that attempt's span.
    expect(attempts.map((a) => partsOf(a.headers.traceparent).spanId).sort()).toEqual(
      deliver.map((span) => span.spanId).sort(),
    );
  });
});
