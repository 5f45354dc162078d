import { afterAll, beforeAll, expect, it } from "vitest";
import { sealSecret } from "../../../src/config/secret-box.js";
import { buildEnvelope } from "../../../src/events/build-envelope.js";
import { eventData } from "../../../src/events/event-catalogue.js";
import { createTestApp, type TestApp } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";

describeEachDialect("the event spine on $name", (dialect) => {
  let t: TestApp;
  let subscribed: number;
  let endpoint: (
    events: string[],
    enabled: 0 | 1,
  ) => {
    name: string;
    url: string;
    secret_ciphertext: string;
    events: string;
    enabled: 0 | 1;
    created_at: number;
    updated_at: number;
  };
  beforeAll(async () => {
    t = await createTestApp(dialect);
    const now = Date.now();
    endpoint = (events: string[], enabled: 0 | 1) => ({
      name: "n",
      url: "https://example.com/hook",
      secret_ciphertext: sealSecret(t.ctx.keys.secretKey, "0123456789abcdef"),
      events: JSON.stringify(events),
      enabled,
      created_at: now,
      updated_at: now,
    });
    const rows = await t.ctx.db
      .insertInto("webhooks")
      .values([
        endpoint(["ADMIN_USER_DISABLED"], 1),
        endpoint(["ADMIN_USER_DISABLED"], 0),
        endpoint(["ROOM_CREATED"], 1),
      ])
      .returning("id")
      .execute();
    subscribed = rows[0]!.id;
  });
  afterAll(async () => {
    await t.close();
  });

  async function countDeliveries(): Promise<number> {
    const row = await t.ctx.db
      .selectFrom("webhook_deliveries")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  it("queues one delivery per enabled subscribed endpoint, with the body frozen at enqueue", async () => {
    const before = await countDeliveries();
    let woke = 0;
    const off = t.ctx.spine.onDeliveriesQueued(() => woke++);
    await t.ctx.database.transaction((tx) =>
      tx.emit(
        "ADMIN_USER_DISABLED",
        eventData.adminUserAction({ username: "u", adminActor: "admin" }),
      ),
    );
    off();
    expect(woke).toBe(1);
    expect((await countDeliveries()) - before).toBe(1);
    const row = await t.ctx.db
      .selectFrom("webhook_deliveries")
      .selectAll()
      .orderBy("id", "desc")
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      webhook_id: subscribed,
      event: "ADMIN_USER_DISABLED",
      status: "PENDING",
      attempts: 0,
    });
    expect(JSON.parse(row.body)).toEqual({
      event: "ADMIN_USER_DISABLED",
      timestamp: new Date(row.created_at).toISOString(),
      webhookId: subscribed,
      data: { username: "u", adminActor: "admin" },
    });
  });

  it("rolls the event back with the domain write when the transaction fails", async () => {
    const before = await countDeliveries();
    let woke = 0;
    const off = t.ctx.spine.onDeliveriesQueued(() => woke++);
    await expect(
      t.ctx.database.transaction(async (tx) => {
        await tx.db
          .insertInto("users")
          .values({
            username: "ghost",
            display_name: "ghost",
            role: "user",
            status: "active",
            created_at: 1,
            updated_at: 1,
          })
          .execute();
        await tx.emit(
          "ADMIN_USER_DISABLED",
          eventData.adminUserAction({ username: "ghost", adminActor: "admin" }),
        );
        throw new Error("failure after the domain write");
      }),
    ).rejects.toThrow("failure after the domain write");
    off();
    expect(woke).toBe(0);
    expect(await countDeliveries()).toBe(before);
    expect(
      await t.ctx.db
        .selectFrom("users")
        .select("id")
        .where("username", "=", "ghost")
        .executeTakeFirst(),
    ).toBeUndefined();
  });

  it("gives each subscribed endpoint its own body, and only endpoints that list the event exactly", async () => {
    const ids = (
      await t.ctx.db
        .insertInto("webhooks")
        .values([
          endpoint(["USER_LEFT_ROOM", "ROOM_DELETED"], 1),
          endpoint(["ROOM_DELETED"], 1),
          endpoint(["ADMIN_ROOM_DELETED"], 1), // contains ROOM_DELETED as a substring
          endpoint(["ROOM_DELETED"], 0),
        ])
        .returning("id")
        .execute()
    ).map((row) => row.id);
    const data = eventData.roomDeleted({ roomId: 41, deletedBy: 'zoë "ops"' });
    let woke = 0;
    const off = t.ctx.spine.onDeliveriesQueued(() => woke++);
    await t.ctx.database.transaction((tx) => tx.emit("ROOM_DELETED", data));
    off();
    expect(woke).toBe(1);
    const rows = await t.ctx.db
      .selectFrom("webhook_deliveries")
      .selectAll()
      .where("event", "=", "ROOM_DELETED")
      .orderBy("webhook_id")
      .execute();
    expect(rows.map((row) => row.webhook_id)).toEqual([ids[0], ids[1]]);
    for (const row of rows) {
      expect(row.body).toBe(buildEnvelope("ROOM_DELETED", row.created_at, row.webhook_id, data));
      expect(row).toMatchObject({
        status: "PENDING",
        attempts: 0,
        next_attempt_at: row.created_at,
      });
    }
  });
});
