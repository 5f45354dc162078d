import { setTimeout as sleep } from "node:timers/promises";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import type { RecordedRequest } from "../../../../helpers/receiver.js";
import { waitFor } from "../../../../helpers/wait-for.js";
import { expectedSignature, type DeliveryRow } from "../delivery-engine/delivery-fixture.js";
import { startOperatingApp, type OperatingApp } from "./operating-fixture.js";

const events = (requests: RecordedRequest[]) =>
  requests.map(
    (r) =>
      JSON.parse(r.body.toString("utf8")) as {
        event: string;
        data: Record<string, unknown>;
      },
  );

describeEachDialect("operating endpoints on $name", (dialect) => {
  let d: OperatingApp;
  beforeAll(async () => {
    d = await startOperatingApp(dialect, {
      webhookAutoDisableMinFailures: 3,
      webhookAutoDisableAfterMs: 1,
      webhookMaxAttempts: 5,
    });
  });
  afterAll(() => d?.close());

  async function room(name: string): Promise<number> {
    const owner = await d.t.user("user");
    const res = await d.t.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: owner.headers,
      payload: { name },
    });
    expect(res.statusCode).toBe(201);
    return res.json().id as number;
  }

  describe("subscriptions", () => {
    it('delivers every event to "*" and only matching ones to a prefix wildcard', async () => {
      const all = await d.receiver();
      const messages = await d.receiver();
      const admins = await d.receiver();
      await d.create({ url: all.url, events: ["*"] });
      await d.create({ url: messages.url, events: ["ROOM_*"] });
      await d.create({ url: admins.url, events: ["ADMIN_*", "ROOM_CREATED"] });
      const roomId = await room("wildcards");
      await d.emitUser("wild");
      await all.waitForRequests(2);
      await messages.waitForRequests(1);
      await admins.waitForRequests(2);
      // Idle: every delivery fan-out wrote has been sent and recorded; none is still to come.
      await d.dispatcher.idle();
      expect(events(all.requests).map((e) => e.event)).toEqual(
        expect.arrayContaining(["ROOM_CREATED", "ADMIN_USER_DISABLED"]),
      );
      expect(events(messages.requests).map((e) => e.event)).toEqual(["ROOM_CREATED"]);
      expect(events(messages.requests)[0]!.data.roomId).toBe(roomId);
      expect(
        events(admins.requests)
          .map((e) => e.event)
          .sort(),
      ).toEqual(["ADMIN_USER_DISABLED", "ROOM_CREATED"]);
    });

    it("refuses a wildcard that matches no event, and WEBHOOK_TEST", async () => {
      for (const bad of [["NOPE_*"], ["WEBHOOK_TEST"], ["*", "*"]]) {
        const res = await d.api("POST", "/api/admin/webhooks", {
          name: "x",
          url: "http://127.0.0.1:1/hook",
          secret: "0123456789abcdef",
          events: bad,
        });
        expect(res.statusCode).toBe(400);
        expect(res.json().code).toBe("invalid_events");
      }
    });

    it("filters events that carry a roomId by roomIds and lets the others through", async () => {
      const receiver = await d.receiver();
      const wanted = await room("wanted");
      const endpoint = await d.create({
        url: receiver.url,
        events: ["ROOM_CREATED", "ADMIN_USER_DISABLED"],
        roomIds: [wanted + 1000, wanted + 1],
      });
      expect(endpoint.roomIds).toEqual([wanted + 1000, wanted + 1]);
      const other = await room("other"); // most likely wanted + 1
      const third = await room("third");
      await d.emitUser("no-room");
      // Idle: every delivery fan-out wrote has been sent and recorded; none is still to come.
      await d.dispatcher.idle();
      const seen = events(receiver.requests);
      expect(seen.map((e) => e.event).sort()).toEqual(
        other === wanted + 1 ? ["ADMIN_USER_DISABLED", "ROOM_CREATED"] : ["ADMIN_USER_DISABLED"],
      );
      expect(seen.every((e) => e.data.roomId !== third)).toBe(true);

      const cleared = await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { roomIds: null });
      expect(cleared.json().roomIds).toBeNull();
      const bad = await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { roomIds: [] });
      expect(bad.json().code).toBe("invalid_room_ids");
    });
  });

  describe("custom headers", () => {
    it("sends them, masks them in answers and keeps them encrypted at rest", async () => {
      const receiver = await d.receiver();
      const endpoint = await d.create({
        url: receiver.url,
        headers: { "X-Api-Key": "key-0123456789", Tenant: "acme" },
      });
      expect(endpoint.headers).toEqual({ "x-api-key": "****6789", tenant: "****" });
      const listed = (await d.api("GET", "/api/admin/webhooks?limit=200")).json().items;
      expect(listed.find((w: { id: number }) => w.id === endpoint.id).headers).toEqual(
        endpoint.headers,
      );
      const row = await d.t.ctx.db
        .selectFrom("webhooks")
        .selectAll()
        .where("id", "=", endpoint.id)
        .executeTakeFirstOrThrow();
      expect(JSON.stringify(row)).not.toContain("key-0123456789");

      await d.emitUser("custom-headers");
      const [request] = await receiver.waitForRequests(1);
      expect(request!.headers["x-api-key"]).toBe("key-0123456789");
      expect(request!.headers.tenant).toBe("acme");
    });

    it.each([
      ["Content-Type", "header_reserved"],
      ["X-Webhook-Anything", "header_reserved"],
      ["webhook-id", "header_reserved"],
      ["Host", "header_reserved"],
      ["bad name", "invalid_header"],
    ])("refuses %s with %s", async (name, code) => {
      const res = await d.api("POST", "/api/admin/webhooks", {
        name: "x",
        url: "http://127.0.0.1:1/hook",
        secret: "0123456789abcdef",
        events: ["ADMIN_USER_DISABLED"],
        headers: { [name]: "v" },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe(code);
    });

    it("refuses values with control characters, over 1024 bytes, and more than 10 headers", async () => {
      const many = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`h${i}`, "v"]));
      for (const headers of [{ a: "line\r\nbreak" }, { a: "x".repeat(1025) }, many]) {
        const res = await d.api("POST", "/api/admin/webhooks", {
          name: "x",
          url: "http://127.0.0.1:1/hook",
          secret: "0123456789abcdef",
          events: ["ADMIN_USER_DISABLED"],
          headers,
        });
        expect(res.json().code).toBe("invalid_header");
      }
    });
  });

  describe("secret rotation", () => {
    it("signs with both secrets during the overlap, then with the new one only", async () => {
      const receiver = await d.receiver();
      const oldSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
      const endpoint = await d.create({
        url: receiver.url,
        secret: oldSecret,
        signatureScheme: "both",
      });
      const res = await d.api("POST", `/api/admin/webhooks/${endpoint.id}/rotate-secret`, {
        overlapSeconds: 1,
      });
      expect(res.statusCode).toBe(200);
      const { secret: newSecret, previousSecretExpiresAt } = res.json();
      expect(newSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(newSecret.slice(6), "base64")).toHaveLength(32);
      expect(Date.parse(previousSecretExpiresAt) - Date.now()).toBeGreaterThan(500);

      await d.emitUser("during-overlap");
      const [during] = await receiver.waitForRequests(1);
      expect(during!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
      expect(() => new Webhook(oldSecret).verify(during!.body, during!.headers)).not.toThrow();
      expect(() => new Webhook(newSecret).verify(during!.body, during!.headers)).not.toThrow();
      // The parley header has one fixed format: it signs with the new secret.
      expect(during!.headers["x-webhook-signature-256"]).toBe(
        expectedSignature(newSecret, during!.body),
      );

      // The overlap is the rotation's own second: the next delivery falls after it.
      await sleep(1_100);
      await d.emitUser("after-overlap");
      const [, after] = await receiver.waitForRequests(2);
      expect(after!.headers["webhook-signature"]!.split(" ")).toHaveLength(1);
      expect(() => new Webhook(oldSecret).verify(after!.body, after!.headers)).toThrow();
      expect(() => new Webhook(newSecret).verify(after!.body, after!.headers)).not.toThrow();
      // The sweep deletes the old secret.
      await waitFor("the old secret deleted", async () => {
        const row = await d.t.ctx.db
          .selectFrom("webhooks")
          .select(["previous_secret_ciphertext", "previous_secret_expires_at"])
          .where("id", "=", endpoint.id)
          .executeTakeFirstOrThrow();
        return row.previous_secret_ciphertext === null && row.previous_secret_expires_at === null;
      });
    });

    it("takes a given secret, drops the old one at once with overlapSeconds 0, and answers 404 for an unknown endpoint", async () => {
      const receiver = await d.receiver();
      const endpoint = await d.create({ url: receiver.url, signatureScheme: "standard-webhooks" });
      const res = await d.api("POST", `/api/admin/webhooks/${endpoint.id}/rotate-secret`, {
        secret: "a-brand-new-secret-value",
        overlapSeconds: 0,
      });
      expect(res.json()).toEqual({
        secret: "a-brand-new-secret-value",
        previousSecretExpiresAt: null,
      });
      await d.emitUser("no-overlap");
      const [request] = await receiver.waitForRequests(1);
      expect(request!.headers["webhook-signature"]!.split(" ")).toHaveLength(1);
      expect(() =>
        new Webhook("a-brand-new-secret-value", { format: "raw" }).verify(
          request!.body,
          request!.headers,
        ),
      ).not.toThrow();
      expect((await d.api("POST", "/api/admin/webhooks/999999/rotate-secret", {})).statusCode).toBe(
        404,
      );
      const tooShort = await d.api("POST", `/api/admin/webhooks/${endpoint.id}/rotate-secret`, {
        secret: "short",
      });
      expect(tooShort.json().code).toBe("invalid_secret");
    });
  });

  describe("recovery, search and the catalogue", () => {
    it("recovers EXHAUSTED deliveries since a time with the same body and event id", async () => {
      const receiver = await d.receiver();
      receiver.respondWith(() => ({ status: 500 }));
      const endpoint = await d.create({ url: receiver.url });
      // Turn the rule off for this endpoint's run: re-enabled endpoints start a new run.
      const since = new Date(Date.now() - 1000).toISOString();
      await d.t.ctx.db
        .insertInto("webhook_deliveries")
        .values(
          [1, 2].map((n) => ({
            webhook_id: endpoint.id,
            event: "ADMIN_USER_DISABLED",
            body: JSON.stringify({ event: "ADMIN_USER_DISABLED", n }),
            status: "EXHAUSTED" as const,
            attempts: 5,
            next_attempt_at: null,
            locked_until: null,
            locked_by: null,
            last_response_status: 500,
            created_at: Date.now(),
            updated_at: Date.now(),
            event_id: `evt_RECOVER${String(n).padStart(19, "0")}`,
          })),
        )
        .execute();
      receiver.respondWith(() => ({ status: 204 }));
      const res = await d.api("POST", `/api/admin/webhooks/${endpoint.id}/recover`, { since });
      expect(res.statusCode).toBe(202);
      expect(res.json()).toEqual({ queued: 2 });
      const requests = await receiver.waitForRequests(2);
      expect(requests.map((r) => JSON.parse(r.body.toString()).n).sort()).toEqual([1, 2]);
      const found = await d.api(
        "GET",
        `/api/admin/deliveries?eventId=evt_RECOVER${"1".padStart(19, "0")}`,
      );
      expect(found.json().items).toHaveLength(2);
      const none = await d.api("POST", `/api/admin/webhooks/${endpoint.id}/recover`, {
        since: new Date(Date.now() + 60_000).toISOString(),
        statuses: ["FAILED"],
      });
      expect(none.json()).toEqual({ queued: 0 });
      const bad = await d.api("POST", `/api/admin/webhooks/${endpoint.id}/recover`, {
        since: new Date().toISOString(),
        until: new Date(Date.now() - 1000).toISOString(),
      });
      expect(bad.json().code).toBe("invalid_time_range");
    });

    it("searches deliveries across endpoints by endpoint, status, event, room, message and time, with cursors", async () => {
      const a = await d.receiver();
      const b = await d.receiver();
      const ea = await d.create({ name: "Search A", url: a.url, events: ["MESSAGE_CREATED"] });
      const eb = await d.create({ name: "Search B", url: b.url, events: ["MESSAGE_CREATED"] });
      const since = new Date().toISOString();
      for (let i = 1; i <= 3; i++)
        await d.emit("MESSAGE_CREATED", {
          roomId: 777_000 + i,
          messageId: 888_000 + i,
          senderId: 1,
          timestamp: new Date().toISOString(),
          threadId: null,
          mentions: [],
        });
      await a.waitForRequests(3);
      await b.waitForRequests(3);
      const byRoom = (await d.api("GET", "/api/admin/deliveries?roomId=777002")).json();
      expect(byRoom.items.map((i: { webhookName: string }) => i.webhookName).sort()).toEqual([
        "Search A",
        "Search B",
      ]);
      const byMessage = (
        await d.api("GET", `/api/admin/deliveries?messageId=888003&webhookId=${eb.id}`)
      ).json();
      expect(byMessage.items).toHaveLength(1);
      expect(byMessage.items[0]).toMatchObject({ webhookId: eb.id, event: "MESSAGE_CREATED" });
      expect(byMessage.items[0].eventId).toMatch(/^evt_[0-9A-Z]{26}$/);

      const page1 = (
        await d.api(
          "GET",
          `/api/admin/deliveries?event=MESSAGE_CREATED&since=${since}&webhookId=${ea.id}&limit=2`,
        )
      ).json();
      expect(page1.items).toHaveLength(2);
      const page2 = (
        await d.api(
          "GET",
          `/api/admin/deliveries?event=MESSAGE_CREATED&since=${since}&webhookId=${ea.id}&limit=2&cursor=${page1.nextCursor}`,
        )
      ).json();
      expect(page2.items).toHaveLength(1);
      expect(page2.nextCursor).toBeNull();
      const ids = [...page1.items, ...page2.items].map((i: { id: number }) => i.id);
      expect(ids).toEqual([...ids].sort((x, y) => y - x));
      const until = (
        await d.api("GET", `/api/admin/deliveries?until=${since}&roomId=777001`)
      ).json();
      expect(until.items).toEqual([]);
      expect((await d.api("GET", "/api/admin/deliveries?bogus=1")).statusCode).toBe(400);
    });

    it("serves the event catalogue with descriptions and sample envelopes", async () => {
      const res = await d.api("GET", "/api/admin/webhooks/event-types");
      expect(res.statusCode).toBe(200);
      const items = res.json().items as Array<{
        name: string;
        description: string;
        sample: Record<string, unknown>;
      }>;
      expect(items.map((i) => i.name)).toContain("WEBHOOK_ENDPOINT_DISABLED");
      expect(items.map((i) => i.name)).toContain("WEBHOOK_TEST");
      for (const item of items) {
        expect(item.description.length).toBeGreaterThan(10);
        expect(Object.keys(item.sample)).toEqual(["event", "timestamp", "webhookId", "data"]);
        expect(item.sample.event).toBe(item.name);
      }
    });
  });

  describe("rate caps", () => {
    it("holds an endpoint to maxDeliveriesPerSecond (within 10%), delaying rather than failing", async () => {
      const receiver = await d.receiver();
      const endpoint = await d.create({ url: receiver.url, maxDeliveriesPerSecond: 20 });
      expect(endpoint.maxDeliveriesPerSecond).toBe(20);
      // Three seconds of sends at the cap: a send is never made before its slot, but one made late
      // (a busy machine) shortens the measured span, and over 60 intervals that stays under 10%.
      await Promise.all(Array.from({ length: 61 }, (_, i) => d.emitUser(`capped-${i}`)));
      const requests = await receiver.waitForRequests(61, 15_000);
      const span = requests[60]!.receivedAt - requests[0]!.receivedAt;
      const rate = (60 * 1000) / span;
      expect(rate).toBeGreaterThan(18);
      expect(rate).toBeLessThan(22);
      const view = (await d.api("GET", `/api/admin/webhooks/${endpoint.id}`)).json();
      expect(view.health.consecutiveFailures).toBe(0);
      const metrics = await d.t.app.inject({ method: "GET", url: "/metrics" });
      expect(metrics.body).toMatch(
        /parley_webhook_attempts_delayed_total\{cause="rate_cap"\} [1-9]/,
      );
      const bad = await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, {
        maxDeliveriesPerSecond: 0,
      });
      expect(bad.statusCode).toBe(400);
      const off = await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, {
        maxDeliveriesPerSecond: null,
      });
      expect(off.json().maxDeliveriesPerSecond).toBeNull();
    });
  });

  describe("health and receivers' answers", () => {
    it("reports 24-hour attempts, success rate, latency percentiles and the last failure", async () => {
      const receiver = await d.receiver();
      receiver.respondWith((_r, i) => (i === 0 ? { status: 500, body: "boom" } : { status: 204 }));
      const endpoint = await d.create({ url: receiver.url });
      expect(endpoint.health).toEqual({
        attempts24h: 0,
        successRate24h: null,
        p50LatencyMs24h: null,
        p95LatencyMs24h: null,
        lastSuccessAt: null,
        lastFailureAt: null,
        lastError: null,
        consecutiveFailures: 0,
        failingSince: null,
        circuit: "closed",
      });
      await d.emitUser("health");
      await receiver.waitForRequests(2);
      const health = await waitFor("two attempts recorded", async () => {
        const res = await d.api("GET", `/api/admin/webhooks/${endpoint.id}`);
        const h = res.json().health;
        return h.attempts24h === 2 ? h : undefined;
      });
      expect(health.successRate24h).toBe(0.5);
      expect(health.p50LatencyMs24h).toEqual(expect.any(Number));
      expect(health.p95LatencyMs24h).toBeGreaterThanOrEqual(health.p50LatencyMs24h);
      expect(health.lastError).toBe("receiver answered HTTP 500");
      // What the log holds, to tell apart a health column and an attempt row that disagree.
      const log = async () => {
        const list = await d.api("GET", `/api/admin/webhooks/${endpoint.id}/deliveries`);
        const items = list.json().items as Array<{ id: number }>;
        const details = await Promise.all(
          items.map(async (item) =>
            (await d.api("GET", `/api/admin/webhooks/${endpoint.id}/deliveries/${item.id}`)).json(),
          ),
        );
        return JSON.stringify({ health, details });
      };
      if (health.lastSuccessAt === null) expect.fail(`no last success: ${await log()}`);
      expect(Date.parse(health.lastSuccessAt)).toBeGreaterThan(Date.parse(health.lastFailureAt));
      expect(health.consecutiveFailures).toBe(0);
    });

    it("waits for Retry-After on a 503, capped by the back-off ceiling, and counts it", async () => {
      const receiver = await d.receiver();
      receiver.respondWith((_r, i) =>
        i === 0 ? { status: 503, headers: { "retry-after": "1" } } : { status: 204 },
      );
      await d.create({ url: receiver.url });
      await d.emitUser("retry-after");
      const [first, second] = await receiver.waitForRequests(2, 5_000);
      // Back-off alone would retry after 100 ms; the receiver asked for 1 s (ceiling 1 s).
      expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(950);
      const metrics = await d.t.app.inject({ method: "GET", url: "/metrics" });
      expect(metrics.body).toMatch(
        /parley_webhook_attempts_delayed_total\{cause="retry_after"\} [1-9]/,
      );
    });

    it("disables an endpoint that answers 410 at once, holds its deliveries and tells the others", async () => {
      const watcher = await d.receiver();
      const gone = await d.receiver();
      gone.respondWith(() => ({ status: 410 }));
      await d.create({ url: watcher.url, events: ["WEBHOOK_ENDPOINT_DISABLED"] });
      const endpoint = await d.create({ name: "Gone one", url: gone.url });
      await d.emitUser("gone-1");
      await gone.waitForRequests(1);
      const [notice] = await watcher.waitForRequests(1);
      const envelope = JSON.parse(notice!.body.toString());
      expect(envelope.event).toBe("WEBHOOK_ENDPOINT_DISABLED");
      expect(envelope.data).toMatchObject({
        webhookId: endpoint.id,
        name: "Gone one",
        reason: "gone",
      });
      const view = (await d.api("GET", `/api/admin/webhooks/${endpoint.id}`)).json();
      expect(view).toMatchObject({ enabled: false, disabledReason: "gone" });
      expect(view.disabledAt).toBe(envelope.data.disabledAt);

      // Held: its queued retry does not go out until it is enabled again (and being disabled,
      // it gets no new deliveries).
      await d.emitUser("gone-2");
      const [held] = (await d.deliveries()).filter((row) => row.webhook_id === endpoint.id);
      expect(held).toMatchObject({ attempts: 1 });
      // Once its retry is due, two sweeps go by without claiming anything of this endpoint.
      await waitFor("the held retry to be due", () => Date.now() > (held!.next_attempt_at ?? 0));
      await d.queue.sweepsDone(2);
      expect(d.queue.claimed.filter((row) => row.webhook_id === endpoint.id)).toHaveLength(1);
      expect(gone.requests).toHaveLength(1);
      gone.respondWith(() => ({ status: 204 }));
      const enabled = await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { enabled: true });
      expect(enabled.json()).toMatchObject({ disabledReason: null, disabledAt: null });
      const [, retried] = await gone.waitForRequests(2);
      expect(JSON.parse(retried!.body.toString()).data.username).toBe("gone-1");
      const metrics = await d.t.app.inject({ method: "GET", url: "/metrics" });
      expect(metrics.body).toMatch(
        /parley_webhook_endpoints_disabled_total\{reason="gone"\} [1-9]/,
      );
    });

    it("auto-disables an endpoint after a run of failures longer than the setting, and says so", async () => {
      const watcher = await d.receiver();
      const failing = await d.receiver();
      failing.respondWith(() => ({ status: 500 }));
      await d.create({ url: watcher.url, events: ["WEBHOOK_ENDPOINT_DISABLED"] });
      const endpoint = await d.create({ name: "Failing one", url: failing.url });
      await d.emitUser("failing");
      const notice = await waitFor("the notice", () =>
        watcher.requests
          .map((r) => JSON.parse(r.body.toString()))
          .find((e) => e.data.webhookId === endpoint.id),
      );
      expect(notice.data.reason).toBe("auto_failing");
      expect(failing.requests).toHaveLength(3);
      const view = (await d.api("GET", `/api/admin/webhooks/${endpoint.id}`)).json();
      expect(view).toMatchObject({ enabled: false, disabledReason: "auto_failing" });
      expect(view.health.consecutiveFailures).toBe(3);
      const metrics = await d.t.app.inject({ method: "GET", url: "/metrics" });
      expect(metrics.body).toMatch(
        /parley_webhook_endpoints_disabled_total\{reason="auto_failing"\} [1-9]/,
      );
      expect(metrics.body).toMatch(
        /parley_webhook_endpoints_disabled\{reason="auto_failing"\} [1-9]/,
      );
      // A manual disable is told apart.
      const manual = await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { enabled: true });
      expect(manual.json().health.consecutiveFailures).toBe(0);
      const off = await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { enabled: false });
      expect(off.json().disabledReason).toBe("manual");
    });
  });

  /** The one delivery of `webhookId` once `ready` holds for it. */
  async function deliveryOf(
    app: OperatingApp,
    webhookId: number,
    what: string,
    ready: (row: DeliveryRow) => boolean,
  ): Promise<DeliveryRow> {
    return waitFor(what, async () =>
      (await app.deliveries()).find((row) => row.webhook_id === webhookId && ready(row)),
    );
  }

  /**
   * Waits until the endpoint's failing delivery has used all its attempts, or the endpoint was
   * disabled on the way (which holds the delivery): either way every failure so far is recorded,
   * and with it the auto-disable rule's verdict.
   */
  async function failuresRunOut(app: OperatingApp, webhookId: number): Promise<void> {
    await waitFor("the delivery exhausted or the endpoint disabled", async () => {
      const view = (await app.api("GET", `/api/admin/webhooks/${webhookId}`)).json();
      if (!view.enabled) return true;
      return (await app.deliveries()).some(
        (row) => row.webhook_id === webhookId && row.status === "EXHAUSTED",
      );
    });
  }

  describe("Retry-After below a 5 s back-off ceiling", () => {
    let r: OperatingApp;
    beforeAll(async () => {
      r = await startOperatingApp(dialect, { webhookBackoffMaxMs: 5_000, webhookMaxAttempts: 5 });
    });
    afterAll(() => r?.close());

    it("delays the next attempt by a 429's Retry-After in seconds, cut to the ceiling", async () => {
      const receiver = await r.receiver();
      receiver.respondWith((_r, i) =>
        i === 0
          ? { status: 429, headers: { "retry-after": "2" } }
          : i === 1
            ? { status: 429, headers: { "retry-after": "3600" } }
            : { status: 204 },
      );
      const endpoint = await r.create({ url: receiver.url });
      await r.emitUser("too-many");
      // next_attempt_at and updated_at are both the recording's clock: their gap is the wait.
      const afterFirst = await deliveryOf(r, endpoint.id, "the 429 recorded", (row) => {
        return row.attempts === 1;
      });
      // Back-off alone would wait 100 ms.
      expect(afterFirst.next_attempt_at! - afterFirst.updated_at).toBe(2_000);
      const [first, second] = await receiver.waitForRequests(2, 10_000);
      expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(2_000);
      const afterSecond = await deliveryOf(r, endpoint.id, "the second 429 recorded", (row) => {
        return row.attempts === 2;
      });
      expect(afterSecond.status).toBe("FAILED");
      expect(afterSecond.next_attempt_at! - afterSecond.updated_at).toBe(5_000);
      const metrics = await r.t.app.inject({ method: "GET", url: "/metrics" });
      const delayed = /parley_webhook_attempts_delayed_total\{cause="retry_after"\} (\d+)/.exec(
        metrics.body,
      );
      expect(Number(delayed?.[1])).toBeGreaterThanOrEqual(2);
    });

    it("delays the next attempt until a 429's Retry-After HTTP date", async () => {
      const receiver = await r.receiver();
      let asked = 0;
      receiver.respondWith((_r, i) => {
        if (i > 0) return { status: 204 };
        // Whole seconds, 2 to 3 s ahead: past the 100 ms back-off, within the ceiling.
        asked = Math.floor((Date.now() + 3_000) / 1000) * 1000;
        return { status: 429, headers: { "retry-after": new Date(asked).toUTCString() } };
      });
      const endpoint = await r.create({ url: receiver.url });
      await r.emitUser("come-back-at");
      const afterFirst = await deliveryOf(r, endpoint.id, "the 429 recorded", (row) => {
        return row.attempts === 1;
      });
      expect(afterFirst.status).toBe("FAILED");
      expect(afterFirst.next_attempt_at).toBe(asked);
      const [, second] = await receiver.waitForRequests(2, 10_000);
      expect(second!.receivedAt).toBeGreaterThanOrEqual(asked);
    });
  });

  describe("auto-disable with a one-hour setting", () => {
    let y: OperatingApp;
    beforeAll(async () => {
      y = await startOperatingApp(dialect, {
        webhookAutoDisableMinFailures: 3,
        webhookAutoDisableAfterMs: 3_600_000,
        webhookMaxAttempts: 5,
      });
    });
    afterAll(() => y?.close());

    it("keeps an endpoint enabled while its run of failures is younger than the setting, and disables it once the run is older", async () => {
      const failing = await y.receiver();
      failing.respondWith(() => ({ status: 500 }));
      const endpoint = await y.create({ url: failing.url });
      await y.emitUser("young-run");
      await failuresRunOut(y, endpoint.id);
      const young = (await y.api("GET", `/api/admin/webhooks/${endpoint.id}`)).json();
      expect(young).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null });
      expect(young.health.consecutiveFailures).toBe(5);

      // The same run, its first failure now past the hour: the next failure disables.
      await y.t.ctx.db
        .updateTable("webhooks")
        .set({ failing_since: Date.now() - 3_600_000 - 60_000 })
        .where("id", "=", endpoint.id)
        .execute();
      await y.emitUser("old-run");
      const old = await waitFor("the endpoint auto-disabled", async () => {
        const view = (await y.api("GET", `/api/admin/webhooks/${endpoint.id}`)).json();
        return view.disabledReason === "auto_failing" && view;
      });
      expect(old.enabled).toBe(false);
      expect(old.health.consecutiveFailures).toBe(6);
    });
  });

  describe("auto-disable turned off", () => {
    it.each([
      ["PARLEY_WEBHOOK_AUTO_DISABLE_AFTER_MS", { webhookAutoDisableAfterMs: 0 }],
      ["PARLEY_WEBHOOK_AUTO_DISABLE_MIN_FAILURES", { webhookAutoDisableMinFailures: 0 }],
    ])("never disables a failing endpoint with %s=0", async (_name, setting) => {
      const off = await startOperatingApp(dialect, {
        webhookAutoDisableMinFailures: 3,
        webhookAutoDisableAfterMs: 1,
        webhookMaxAttempts: 5,
        ...setting,
      });
      onTestFinished(() => off.close());
      const failing = await off.receiver();
      failing.respondWith(() => ({ status: 500 }));
      const endpoint = await off.create({ url: failing.url });
      await off.emitUser("failing-1");
      await failuresRunOut(off, endpoint.id);
      const afterRun = (await off.api("GET", `/api/admin/webhooks/${endpoint.id}`)).json();
      expect(afterRun).toMatchObject({ enabled: true, disabledReason: null });
      expect(afterRun.health.consecutiveFailures).toBe(5);
      // A run a day old by then: any rule left on would disable at the next failure.
      await off.t.ctx.db
        .updateTable("webhooks")
        .set({ failing_since: Date.now() - 86_400_000 })
        .where("id", "=", endpoint.id)
        .execute();
      await off.emitUser("failing-2");
      // Every failure of the second delivery recorded (it is EXHAUSTED only after its last one).
      await waitFor("the second delivery exhausted", async () => {
        const rows = (await off.deliveries()).filter((row) => row.webhook_id === endpoint.id);
        return rows.length === 2 && rows.every((row) => row.status === "EXHAUSTED");
      });
      const view = (await off.api("GET", `/api/admin/webhooks/${endpoint.id}`)).json();
      expect(view).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null });
      expect(view.health.consecutiveFailures).toBe(10);
      const metrics = await off.t.app.inject({ method: "GET", url: "/metrics" });
      expect(metrics.body).not.toMatch(
        /parley_webhook_endpoints_disabled_total\{reason="auto_failing"\} [1-9]/,
      );
    });
  });
});
