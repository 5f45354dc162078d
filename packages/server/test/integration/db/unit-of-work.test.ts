import { afterAll, beforeAll, expect, it } from "vitest";
import { EVENT_NAMES } from "../../../src/events/event-catalogue.js";
import type { ModerationClassifier } from "../../../src/safety/moderation/moderation-classifier.js";
import type { TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { startReceiver, type Receiver } from "../../helpers/receiver.js";
import {
  startDeliveryApp,
  type DeliveryApp,
} from "../webhooks/outbound/delivery-engine/delivery-fixture.js";

/**
 * Every write path wakes the dispatcher after its commit on its own: the sweep is set to run
 * every ten minutes, far past the test's time-out, so a delivery that arrives at all was started
 * by a wake-up. The unit of work (ctx.database.transaction) is what makes this hold for every
 * path; a path that wrote outside it and forgot the wake-up would fail here, not only in
 * production.
 */
const NO_SWEEP = 600_000;

const quarantineEverything: ModerationClassifier = {
  name: "stub",
  async classify(text) {
    return text.includes("QUARANTINE")
      ? { category: "harassment", score: 0.95 }
      : { category: "none", score: 0 };
  },
};

describeEachDialect("every write path wakes the dispatcher on $name", (dialect) => {
  let d: DeliveryApp;
  let target: Receiver;
  let webhookId: number;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    d = await startDeliveryApp(dialect, { webhookSweepIntervalMs: NO_SWEEP });
    d.t.ctx.safety.classifier = quarantineEverything;
    target = await startReceiver();
    const created = await d.t.app.inject({
      method: "POST",
      url: "/api/admin/webhooks",
      headers: d.t.admin.headers,
      payload: {
        name: "everything",
        url: target.url,
        secret: "a-long-enough-secret",
        events: [...EVENT_NAMES],
      },
    });
    expect(created.statusCode).toBe(201);
    webhookId = created.json().id;
    alice = await d.t.user("user", "alice");
    bob = await d.t.user("user", "bob");
    // Let the dispatcher's start-up pass go by, so what follows depends on wake-ups alone.
    await d.dispatcher.idle();
  });
  afterAll(async () => {
    await target?.close();
    await d?.close();
  });

  /** Runs `action` and expects a delivery of `event` to arrive (only a wake-up can send it). */
  async function expectDelivered(event: string, action: () => Promise<unknown>): Promise<void> {
    const before = target.requests.length;
    await action();
    // Deliveries of earlier actions may still be arriving: wait for this one among them.
    for (let n = before + 1; ; n++) {
      const requests = await target.waitForRequests(n);
      const events = requests.slice(before).map((r) => JSON.parse(r.body.toString()).event);
      if (events.includes(event)) return;
    }
  }

  async function inject(
    method: "POST" | "DELETE" | "PATCH",
    url: string,
    user: { headers: Record<string, string> },
    payload?: object,
  ) {
    const response = await d.t.app.inject({ method, url, headers: user.headers, payload });
    expect(response.statusCode, `${method} ${url}: ${response.body}`).toBeLessThan(300);
    return response.statusCode === 204 ? undefined : response.json();
  }

  let roomId: number;

  it("room creation, join, leave and message posts", async () => {
    await expectDelivered("ROOM_CREATED", async () => {
      roomId = (await inject("POST", "/api/rooms", alice, { name: "general" })).id;
    });
    await expectDelivered("USER_JOINED_ROOM", () =>
      inject("POST", `/api/rooms/${roomId}/join`, bob),
    );
    await expectDelivered("MESSAGE_CREATED", () =>
      inject("POST", `/api/rooms/${roomId}/messages`, bob, { content: "hello" }),
    );
    await expectDelivered("USER_LEFT_ROOM", () =>
      inject("POST", `/api/rooms/${roomId}/leave`, bob),
    );
  });

  it("an ingest post", async () => {
    const inbound = await inject("POST", "/api/admin/inbound-webhooks", d.t.admin, {
      roomId,
      displayName: "CI",
    });
    await expectDelivered("MESSAGE_CREATED", () =>
      d.t.app.inject({
        method: "POST",
        url: `/api/public/webhooks/ingest/${inbound.token}`,
        payload: { content: "build passed" },
      }),
    );
  });

  it("a quarantine and its approval", async () => {
    await expectDelivered("MESSAGE_AUTO_MODERATION_QUARANTINED", () =>
      inject("POST", `/api/rooms/${roomId}/messages`, alice, { content: "QUARANTINE me" }),
    );
    const flags = await d.t.app.inject({
      method: "GET",
      url: "/api/admin/moderation/flags?status=pending",
      headers: d.t.admin.headers,
    });
    const flagId = flags.json().items[0].id;
    await expectDelivered("MESSAGE_CREATED", () =>
      inject("POST", `/api/admin/moderation/flags/${flagId}/approve`, d.t.admin),
    );
  });

  it("a file upload", async () => {
    const boundary = "----parley-test";
    const payload = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="notes.txt"\r\n` +
        `Content-Type: text/plain\r\n\r\nsome notes\r\n--${boundary}--\r\n`,
    );
    await expectDelivered("FILE_UPLOADED", () =>
      inject(
        "POST",
        `/api/rooms/${roomId}/files`,
        {
          headers: {
            ...alice.headers,
            "content-type": `multipart/form-data; boundary=${boundary}`,
          },
        },
        payload,
      ),
    );
  });

  it("a direct message promoted to a room, then the room deleted by its creator and by an admin", async () => {
    const dm = await inject("POST", "/api/dms", alice, { userId: bob.id });
    await expectDelivered("ROOM_CREATED", () =>
      inject("POST", `/api/dms/${dm.id}/promote`, alice, { name: "pair" }),
    );
    await expectDelivered("ROOM_DELETED", () => inject("DELETE", `/api/rooms/${dm.id}`, alice));
    const other = (await inject("POST", "/api/rooms", alice, { name: "doomed" })).id;
    await expectDelivered("ADMIN_ROOM_DELETED", () =>
      inject("DELETE", `/api/admin/rooms/${other}`, d.t.admin),
    );
  });

  it("admin actions on users", async () => {
    const carol = await d.t.user("user", "carol");
    const dave = await d.t.user("user", "dave");
    await expectDelivered("ADMIN_USER_DISABLED", () =>
      inject("POST", `/api/admin/users/${carol.id}/disable`, d.t.admin),
    );
    await expectDelivered("ADMIN_USER_DELETED", () =>
      inject("DELETE", `/api/admin/users/${dave.id}`, d.t.admin),
    );
  });

  it("the test event, a redelivery, and an endpoint enabled again", async () => {
    await expectDelivered("WEBHOOK_TEST", () =>
      inject("POST", `/api/admin/webhooks/${webhookId}/test`, d.t.admin),
    );
    const deliveries = await d.t.app.inject({
      method: "GET",
      url: `/api/admin/webhooks/${webhookId}/deliveries?event=WEBHOOK_TEST`,
      headers: d.t.admin.headers,
    });
    const deliveryId = deliveries.json().items[0].id;
    await expectDelivered("WEBHOOK_TEST", () =>
      inject(
        "POST",
        `/api/admin/webhooks/${webhookId}/deliveries/${deliveryId}/redeliver`,
        d.t.admin,
      ),
    );

    // Queued while enabled and disabled in the same transaction, so the dispatcher never saw it.
    await d.t.ctx.database.transaction(async (tx) => {
      await tx.emit("ADMIN_USER_DISABLED", { username: "erin", adminActor: "admin" });
      await tx.db.updateTable("webhooks").set({ enabled: 0 }).where("id", "=", webhookId).execute();
    });
    await d.dispatcher.idle();
    // Held while disabled: the dispatcher went idle with it still queued, never attempted ...
    const held = (await d.deliveries()).filter(
      (row) => row.webhook_id === webhookId && JSON.parse(row.body).data.username === "erin",
    );
    expect(held).toHaveLength(1);
    expect(held[0]).toMatchObject({ status: "PENDING", attempts: 0 });
    // ... and sent as soon as the endpoint is enabled again, without waiting for the sweep.
    await expectDelivered("ADMIN_USER_DISABLED", () =>
      inject("PATCH", `/api/admin/webhooks/${webhookId}`, d.t.admin, { enabled: true }),
    );
  });
});
