import { afterAll, beforeAll, expect, it } from "vitest";
import { eventData, EVENT_TYPES } from "../../../../../src/events/event-catalogue.js";
import { createTestApp, type TestApp } from "../../../../helpers/build-app.js";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { createEndpoint } from "../../../../helpers/fixtures.js";
import { admin, countRows, insertDelivery } from "./webhook-fixtures.js";

interface Summary {
  id: number;
  webhookId: number;
  event: string;
  status: string;
  attempts: number;
  createdAt: string;
  updatedAt: string;
  nextAttemptAt: string | null;
  lastResponseStatus: number | null;
  held: boolean;
  maxAttempts: number;
  redeliveryOf: number | null;
}
interface Page {
  items: Summary[];
  nextCursor: string | null;
}

describeEachDialect("outbound webhook deliveries on $name", (dialect) => {
  let t: TestApp;
  let wakeUps = 0;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    t.ctx.spine.onDeliveriesQueued(() => (wakeUps += 1));
  });
  afterAll(async () => {
    await t.close();
  });

  async function deliveries(webhookId: number, query = ""): Promise<Page> {
    const res = await admin(t, "GET", `/api/admin/webhooks/${webhookId}/deliveries${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Page;
  }

  async function emitUserDisabled(username: string): Promise<void> {
    await t.ctx.database.transaction((tx) =>
      tx.emit("ADMIN_USER_DISABLED", eventData.adminUserAction({ username, adminActor: "admin" })),
    );
  }

  it("queues one delivery per enabled subscribed endpoint and none for disabled or unsubscribed ones", async () => {
    const subscribed = await createEndpoint(t, { events: ["ROOM_CREATED", "ADMIN_USER_DISABLED"] });
    const alsoSubscribed = await createEndpoint(t, { events: ["ADMIN_USER_DISABLED"] });
    const disabled = await createEndpoint(t, { events: ["ADMIN_USER_DISABLED"], enabled: false });
    const unsubscribed = await createEndpoint(t, { events: ["MESSAGE_CREATED"] });

    await emitUserDisabled("mallory");

    for (const endpoint of [subscribed, alsoSubscribed]) {
      const page = await deliveries(endpoint.id);
      expect(page.items).toHaveLength(1);
      expect(page.items[0]).toMatchObject({
        webhookId: endpoint.id,
        event: "ADMIN_USER_DISABLED",
        status: "PENDING",
        attempts: 0,
        lastResponseStatus: null,
      });
      const detail = (
        await admin(t, "GET", `/api/admin/webhooks/${endpoint.id}/deliveries/${page.items[0]!.id}`)
      ).json();
      expect(detail.payload).toEqual({
        event: "ADMIN_USER_DISABLED",
        timestamp: expect.stringMatching(/Z$/),
        webhookId: endpoint.id,
        data: { username: "mallory", adminActor: "admin" },
      });
    }
    expect((await deliveries(disabled.id)).items).toEqual([]);
    expect((await deliveries(unsubscribed.id)).items).toEqual([]);
  });

  it("keeps deliveries queued while their endpoint is disabled and wakes the dispatcher when it is enabled again", async () => {
    const endpoint = await createEndpoint(t);
    await emitUserDisabled("trudy");
    const [queued] = (await deliveries(endpoint.id)).items;
    expect(queued).toMatchObject({ status: "PENDING" });

    expect(
      (await admin(t, "PATCH", `/api/admin/webhooks/${endpoint.id}`, { enabled: false }))
        .statusCode,
    ).toBe(200);
    await emitUserDisabled("victor");
    expect((await deliveries(endpoint.id)).items).toEqual([{ ...queued, held: true }]);

    const wakeUpsBefore = wakeUps;
    const renamed = await admin(t, "PATCH", `/api/admin/webhooks/${endpoint.id}`, { name: "off" });
    expect(renamed.statusCode).toBe(200);
    expect(wakeUps).toBe(wakeUpsBefore);
    // Enabling wakes the dispatcher: the held-back delivery is due at once.
    const enabled = await admin(t, "PATCH", `/api/admin/webhooks/${endpoint.id}`, {
      enabled: true,
    });
    expect(enabled.statusCode).toBe(200);
    expect(wakeUps).toBe(wakeUpsBefore + 1);
    expect((await deliveries(endpoint.id)).items).toEqual([queued]);
  });

  it("queues a WEBHOOK_TEST delivery to a disabled endpoint only, and wakes the dispatcher after commit", async () => {
    const target = await createEndpoint(t, { enabled: false });
    const bystander = await createEndpoint(t);
    const rowsBefore = await countRows(t, "webhook_deliveries");
    const wakeUpsBefore = wakeUps;

    const res = await admin(t, "POST", `/api/admin/webhooks/${target.id}/test`);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({
      deliveryId: expect.any(Number),
      status: "PENDING",
      held: false,
    });
    expect(wakeUps).toBe(wakeUpsBefore + 1);
    expect(await countRows(t, "webhook_deliveries")).toBe(rowsBefore + 1);
    expect((await deliveries(bystander.id)).items).toEqual([]);

    const { deliveryId } = res.json();
    const detail = await admin(
      t,
      "GET",
      `/api/admin/webhooks/${target.id}/deliveries/${deliveryId}`,
    );
    expect(detail.statusCode).toBe(200);
    expect(detail.json()).toMatchObject({
      id: deliveryId,
      webhookId: target.id,
      event: "WEBHOOK_TEST",
      status: "PENDING",
      attempts: 0,
    });
    expect(detail.json().payload).toEqual({
      event: "WEBHOOK_TEST",
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      webhookId: target.id,
      data: { message: "Test delivery from Parley", requestedBy: "admin" },
    });
    // The envelope's timestamp is the enqueue time.
    const queuedAt = Date.parse(detail.json().payload.timestamp);
    expect(Math.abs(queuedAt - Date.parse(detail.json().createdAt))).toBeLessThan(1000);
    // The stored body is compact JSON: exactly the bytes that will be signed and sent.
    const row = await t.ctx.db
      .selectFrom("webhook_deliveries")
      .select("body")
      .where("id", "=", deliveryId)
      .executeTakeFirstOrThrow();
    expect(row.body).toBe(JSON.stringify(detail.json().payload));
  });

  it("sends any event of the catalogue as a test with its sample data, to that endpoint alone", async () => {
    const target = await createEndpoint(t, { events: ["ROOM_CREATED"] });
    const bystander = await createEndpoint(t, { events: ["MESSAGE_CREATED"] });
    const res = await admin(t, "POST", `/api/admin/webhooks/${target.id}/test`, {
      event: "MESSAGE_CREATED",
    });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({ deliveryId: expect.any(Number), status: "PENDING", held: false });
    const detail = await admin(
      t,
      "GET",
      `/api/admin/webhooks/${target.id}/deliveries/${res.json().deliveryId}`,
    );
    expect(detail.json()).toMatchObject({ event: "MESSAGE_CREATED", status: "PENDING" });
    expect(detail.json().payload).toEqual({
      event: "MESSAGE_CREATED",
      timestamp: expect.any(String),
      webhookId: target.id,
      data: EVENT_TYPES.MESSAGE_CREATED.sample,
    });
    // Not subscribed to it, and yet sent: a test goes to the endpoint asked, and nowhere else.
    expect((await deliveries(bystander.id)).items).toEqual([]);

    // To a disabled endpoint a sample is held (only WEBHOOK_TEST goes out regardless).
    await admin(t, "PATCH", `/api/admin/webhooks/${target.id}`, { enabled: false });
    const held = await admin(t, "POST", `/api/admin/webhooks/${target.id}/test`, {
      event: "ROOM_DELETED",
    });
    expect(held.json()).toMatchObject({ held: true });
    const plain = await admin(t, "POST", `/api/admin/webhooks/${target.id}/test`, {});
    expect(plain.json()).toMatchObject({ held: false });
    const [plainRow, heldRow] = (await deliveries(target.id)).items;
    expect(plainRow).toMatchObject({ event: "WEBHOOK_TEST", held: false });
    expect(heldRow).toMatchObject({ event: "ROOM_DELETED", held: true });

    const unknown = await admin(t, "POST", `/api/admin/webhooks/${target.id}/test`, {
      event: "NOT_AN_EVENT",
    });
    expect(unknown.statusCode).toBe(400);
    const stray = await admin(t, "POST", `/api/admin/webhooks/${target.id}/test`, { x: 1 });
    expect(stray.json().code).toBe("unknown_field");
  });

  it("lists deliveries newest first and filters by status and event", async () => {
    const endpoint = await createEndpoint(t);
    const base = Date.UTC(2026, 0, 1);
    const ids = {
      pending: await insertDelivery(t, endpoint.id, { status: "PENDING", createdAt: base }),
      success: await insertDelivery(t, endpoint.id, {
        status: "SUCCESS",
        createdAt: base + 1,
        nextAttemptAt: null,
        attempts: 1,
        lastResponseStatus: 204,
      }),
      failed: await insertDelivery(t, endpoint.id, {
        status: "FAILED",
        createdAt: base + 2,
        attempts: 2,
        lastResponseStatus: 503,
      }),
      exhausted: await insertDelivery(t, endpoint.id, {
        status: "EXHAUSTED",
        createdAt: base + 3,
        nextAttemptAt: null,
        attempts: 5,
        lastResponseStatus: 500,
      }),
      testFailed: await insertDelivery(t, endpoint.id, {
        status: "FAILED",
        event: "WEBHOOK_TEST",
        createdAt: base + 4,
        attempts: 1,
      }),
    };
    const other = await createEndpoint(t);
    await insertDelivery(t, other.id, { status: "FAILED" });

    const all = await deliveries(endpoint.id);
    expect(all.items.map((d) => d.id)).toEqual([
      ids.testFailed,
      ids.exhausted,
      ids.failed,
      ids.success,
      ids.pending,
    ]);
    expect(all.nextCursor).toBeNull();
    expect(all.items.find((d) => d.id === ids.success)).toEqual({
      id: ids.success,
      webhookId: endpoint.id,
      event: "ADMIN_USER_DISABLED",
      status: "SUCCESS",
      attempts: 1,
      createdAt: new Date(base + 1).toISOString(),
      updatedAt: new Date(base + 1).toISOString(),
      nextAttemptAt: null,
      lastResponseStatus: 204,
      eventId: expect.stringMatching(/^evt_[0-9A-Z]{26}$/),
      held: false,
      maxAttempts: t.ctx.config.webhookMaxAttempts,
      redeliveryOf: null,
    });
    expect(all.items.find((d) => d.id === ids.failed)!.nextAttemptAt).toBe(
      new Date(base + 2).toISOString(),
    );
    expect(all.items.every((d) => !d.held)).toBe(true);

    // Disabled: its unfinished deliveries are held (the test delivery is sent anyway), in this
    // endpoint's log and in the search across endpoints.
    await admin(t, "PATCH", `/api/admin/webhooks/${endpoint.id}`, { enabled: false });
    const heldIds = (await deliveries(endpoint.id)).items.filter((d) => d.held).map((d) => d.id);
    expect(heldIds).toEqual([ids.failed, ids.pending]);
    const searched = await admin(t, "GET", `/api/admin/deliveries?webhookId=${endpoint.id}`);
    expect(
      searched
        .json<{ items: Array<{ id: number; held: boolean }> }>()
        .items.filter((d) => d.held)
        .map((d) => d.id),
    ).toEqual([ids.failed, ids.pending]);
    await admin(t, "PATCH", `/api/admin/webhooks/${endpoint.id}`, { enabled: true });

    expect((await deliveries(endpoint.id, "?status=FAILED")).items.map((d) => d.id)).toEqual([
      ids.testFailed,
      ids.failed,
    ]);
    expect((await deliveries(endpoint.id, "?event=WEBHOOK_TEST")).items.map((d) => d.id)).toEqual([
      ids.testFailed,
    ]);
    expect(
      (await deliveries(endpoint.id, "?status=FAILED&event=ADMIN_USER_DISABLED")).items.map(
        (d) => d.id,
      ),
    ).toEqual([ids.failed]);
    expect((await deliveries(endpoint.id, "?status=SUCCESS&event=ROOM_CREATED")).items).toEqual([]);
  });

  it("pages through deliveries with the cursor, newest first, without gaps or repeats", async () => {
    const endpoint = await createEndpoint(t);
    const made: number[] = [];
    for (let i = 0; i < 7; i += 1)
      made.push(await insertDelivery(t, endpoint.id, { status: i % 2 ? "FAILED" : "SUCCESS" }));

    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Page = await deliveries(
        endpoint.id,
        `?limit=3${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items.map((d) => d.id));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual([...made].reverse());

    const failedOnly: number[] = [];
    cursor = null;
    do {
      const page: Page = await deliveries(
        endpoint.id,
        `?status=FAILED&limit=2${cursor ? `&cursor=${cursor}` : ""}`,
      );
      failedOnly.push(...page.items.map((d) => d.id));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(failedOnly).toEqual(made.filter((_, i) => i % 2).reverse());
  });

  it("answers 400 for an unknown status or event filter, a bad limit, a bad cursor or a stray field", async () => {
    const endpoint = await createEndpoint(t);
    for (const [query, code] of [
      ["?status=DONE", "validation_failed"],
      ["?status=pending", "validation_failed"],
      ["?event=MESSAGE_EXPLODED", "validation_failed"],
      ["?limit=0", "validation_failed"],
      ["?limit=201", "validation_failed"],
      ["?cursor=garbage", "invalid_cursor"],
      ["?state=FAILED", "unknown_field"],
    ] as const) {
      const res = await admin(t, "GET", `/api/admin/webhooks/${endpoint.id}/deliveries${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().code, query).toBe(code);
    }
  });

  it("shows a delivery with its payload and attempt history in attempt order", async () => {
    const endpoint = await createEndpoint(t);
    const nextAttemptAt = Date.UTC(2026, 0, 2, 10, 0, 0, 250);
    const id = await insertDelivery(t, endpoint.id, {
      status: "FAILED",
      attempts: 2,
      nextAttemptAt,
      lastResponseStatus: null,
    });
    const started = Date.UTC(2026, 0, 2, 9, 59, 0, 125);
    // Inserted out of order: the view orders by attempt number.
    await t.ctx.db
      .insertInto("webhook_attempts")
      .values([
        {
          delivery_id: id,
          attempt: 2,
          started_at: started + 30_000,
          duration_ms: 30_000,
          response_status: null,
          response_body: null,
          error: "timed out after 30000 ms",
        },
        {
          delivery_id: id,
          attempt: 1,
          started_at: started,
          duration_ms: 87,
          response_status: 503,
          response_body: "upstream busy",
          error: null,
        },
      ])
      .execute();

    const res = await admin(t, "GET", `/api/admin/webhooks/${endpoint.id}/deliveries/${id}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      id,
      webhookId: endpoint.id,
      status: "FAILED",
      attempts: 2,
      nextAttemptAt: new Date(nextAttemptAt).toISOString(),
      lastResponseStatus: null,
    });
    const stored = await t.ctx.db
      .selectFrom("webhook_deliveries")
      .select("body")
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    expect(body.payload).toEqual(JSON.parse(stored.body));
    expect(body.attemptHistory).toEqual([
      {
        attempt: 1,
        startedAt: new Date(started).toISOString(),
        durationMs: 87,
        responseStatus: 503,
        responseBody: "upstream busy",
        error: null,
        requestHeaders: null,
        responseHeaders: null,
      },
      {
        attempt: 2,
        startedAt: new Date(started + 30_000).toISOString(),
        durationMs: 30_000,
        responseStatus: null,
        responseBody: null,
        error: "timed out after 30000 ms",
        requestHeaders: null,
        responseHeaders: null,
      },
    ]);
  });

  it("shows an empty attempt history for a delivery not yet attempted", async () => {
    const endpoint = await createEndpoint(t);
    const id = await insertDelivery(t, endpoint.id);
    const res = await admin(t, "GET", `/api/admin/webhooks/${endpoint.id}/deliveries/${id}`);
    expect(res.json().attemptHistory).toEqual([]);
  });

  it("answers 404 not_found for an unknown endpoint, an unknown delivery, or another endpoint's delivery", async () => {
    const owner = await createEndpoint(t);
    const stranger = await createEndpoint(t);
    const id = await insertDelivery(t, owner.id);
    for (const [method, url] of [
      ["GET", "/api/admin/webhooks/999999/deliveries"],
      ["GET", `/api/admin/webhooks/999999/deliveries/${id}`],
      ["GET", `/api/admin/webhooks/${owner.id}/deliveries/999999`],
      ["GET", `/api/admin/webhooks/${stranger.id}/deliveries/${id}`],
      ["POST", `/api/admin/webhooks/${stranger.id}/deliveries/${id}/redeliver`],
      ["POST", `/api/admin/webhooks/${owner.id}/deliveries/999999/redeliver`],
      ["POST", `/api/admin/webhooks/999999/deliveries/${id}/redeliver`],
    ] as const) {
      const res = await admin(t, method, url);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().code).toBe("not_found");
    }
  });

  it("redelivers a delivery in any state as a new PENDING delivery with byte-identical body", async () => {
    const endpoint = await createEndpoint(t);
    // Not what JSON.stringify would produce (spacing, escapes, key order): only a byte copy matches.
    const body = `{"event":"ADMIN_USER_DISABLED", "timestamp":"2026-01-01T00:00:00.000Z","webhookId":${endpoint.id},"data":{"username":"zo\\u00eb \u{1F600}","adminActor":"admin"}}`;
    for (const status of ["PENDING", "SUCCESS", "FAILED", "EXHAUSTED"] as const) {
      const original = await insertDelivery(t, endpoint.id, {
        status,
        body,
        attempts: status === "PENDING" ? 0 : 3,
        lastResponseStatus: 500,
      });
      const wakeUpsBefore = wakeUps;
      const res = await admin(
        t,
        "POST",
        `/api/admin/webhooks/${endpoint.id}/deliveries/${original}/redeliver`,
      );
      expect(res.statusCode, status).toBe(202);
      expect(res.json()).toEqual({ deliveryId: expect.any(Number) });
      expect(wakeUps).toBe(wakeUpsBefore + 1);
      const copyId = res.json().deliveryId as number;
      expect(copyId).not.toBe(original);

      const rows = await t.ctx.db
        .selectFrom("webhook_deliveries")
        .select(["id", "webhook_id", "event", "body", "status", "attempts", "last_response_status"])
        .where("id", "in", [original, copyId])
        .orderBy("id")
        .execute();
      expect(rows[1]).toEqual({
        id: copyId,
        webhook_id: endpoint.id,
        event: "ADMIN_USER_DISABLED",
        body,
        status: "PENDING",
        attempts: 0,
        last_response_status: null,
      });
      expect(Buffer.from(rows[1]!.body, "utf8").equals(Buffer.from(body, "utf8"))).toBe(true);
      expect(rows[0]).toMatchObject({ status, body });
    }
    const newest = (await deliveries(endpoint.id, "?limit=1")).items[0]!;
    expect(newest).toMatchObject({ status: "PENDING", attempts: 0 });
  });

  it("deletes an endpoint with all its deliveries and attempts, leaving other endpoints' rows", async () => {
    const doomed = await createEndpoint(t);
    const kept = await createEndpoint(t);
    const doomedDeliveries = [
      await insertDelivery(t, doomed.id, { status: "FAILED", attempts: 1 }),
      await insertDelivery(t, doomed.id),
    ];
    const keptDelivery = await insertDelivery(t, kept.id, { status: "FAILED", attempts: 1 });
    await t.ctx.db
      .insertInto("webhook_attempts")
      .values(
        [doomedDeliveries[0]!, keptDelivery].map((id) => ({
          delivery_id: id,
          attempt: 1,
          started_at: Date.now(),
          duration_ms: 5,
          response_status: 500,
          response_body: "",
          error: null,
        })),
      )
      .execute();

    const res = await admin(t, "DELETE", `/api/admin/webhooks/${doomed.id}`);
    expect(res.statusCode).toBe(204);

    const leftDeliveries = await t.ctx.db
      .selectFrom("webhook_deliveries")
      .select("id")
      .where("webhook_id", "=", doomed.id)
      .execute();
    expect(leftDeliveries).toEqual([]);
    const leftAttempts = await t.ctx.db
      .selectFrom("webhook_attempts")
      .select("delivery_id")
      .where("delivery_id", "in", [...doomedDeliveries, keptDelivery])
      .execute();
    expect(leftAttempts).toEqual([{ delivery_id: keptDelivery }]);
    expect((await deliveries(kept.id)).items.map((d) => d.id)).toEqual([keptDelivery]);
    expect((await admin(t, "GET", `/api/admin/webhooks/${doomed.id}/deliveries`)).statusCode).toBe(
      404,
    );

    // An event after the delete queues nothing for the deleted endpoint.
    await emitUserDisabled("walter");
    expect(
      await t.ctx.db
        .selectFrom("webhook_deliveries")
        .select("id")
        .where("webhook_id", "=", doomed.id)
        .execute(),
    ).toEqual([]);
  });

  it("tags the delivery log and a delivery with an ETag and answers 304 while nothing changed", async () => {
    const endpoint = await createEndpoint(t, { events: ["ADMIN_USER_DISABLED"] });
    const get = (url: string, etag?: string) =>
      t.app.inject({
        method: "GET",
        url,
        headers: { ...t.admin.headers, ...(etag === undefined ? {} : { "if-none-match": etag }) },
      });
    const logUrl = `/api/admin/webhooks/${endpoint.id}/deliveries`;
    const first = await get(logUrl);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]{27}"$/);
    expect(first.headers["cache-control"]).toBe("private, no-cache");

    const same = await get(logUrl, etag);
    expect(same.statusCode).toBe(304);
    expect(same.body).toBe("");
    expect(same.headers.etag).toBe(etag);
    expect((await get(logUrl, `W/"other", ${etag}`)).statusCode).toBe(304);

    await emitUserDisabled("eve");
    const changed = await get(logUrl, etag);
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    const [delivery] = (changed.json() as Page).items;

    const detailUrl = `${logUrl}/${delivery!.id}`;
    const detail = await get(detailUrl);
    expect((await get(detailUrl, detail.headers.etag as string)).statusCode).toBe(304);
    await t.ctx.db
      .updateTable("webhook_deliveries")
      .set({ status: "FAILED", attempts: 1 })
      .where("id", "=", delivery!.id)
      .execute();
    const after = await get(detailUrl, detail.headers.etag as string);
    expect(after.statusCode).toBe(200);
    expect(after.json()).toMatchObject({ status: "FAILED", attempts: 1 });

    // Errors are not tagged.
    const missing = await get(`${logUrl}/999999`);
    expect(missing.statusCode).toBe(404);
    expect(missing.headers.etag).toBeUndefined();
  });
});
