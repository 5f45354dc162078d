import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../../../helpers/build-app.js";
import { describeEachDialect } from "../../../../helpers/dialects.js";

describeEachDialect("ids are never reused after a delete on $name", (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t?.close());

  const api = (
    method: "POST" | "DELETE",
    url: string,
    payload?: object,
    headers = t.admin.headers,
  ) => t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });

  it("gives a new webhook a new id after the newest one was deleted", async () => {
    const body = {
      name: "x",
      url: "https://hooks.example.com/x",
      secret: "0123456789abcdef",
      events: ["*"],
    };
    const first = (await api("POST", "/api/admin/webhooks", body)).json().id as number;
    expect((await api("DELETE", `/api/admin/webhooks/${first}`)).statusCode).toBe(204);
    const second = (await api("POST", "/api/admin/webhooks", body)).json().id as number;
    expect(second).toBeGreaterThan(first);
  });

  it("gives new rooms, messages and deliveries new ids after deletes", async () => {
    const user = await t.user("user");
    const webhook = (
      await api("POST", "/api/admin/webhooks", {
        name: "y",
        url: "https://hooks.example.com/y",
        secret: "0123456789abcdef",
        events: ["*"],
      })
    ).json().id as number;
    const room = async () =>
      (await api("POST", "/api/rooms", { name: "r" }, user.headers)).json().id as number;
    const message = async (roomId: number) =>
      (await api("POST", `/api/rooms/${roomId}/messages`, { content: "hi" }, user.headers)).json()
        .id as number;
    const newestDelivery = async () =>
      Number(
        (await sql<{ id: number }>`SELECT max(id) AS id FROM webhook_deliveries`.execute(t.ctx.db))
          .rows[0]!.id,
      );

    const r1 = await room();
    const m1 = await message(r1);
    const d1 = await newestDelivery();
    // Deleting the room deletes its messages (cascade); the endpoint's deliveries go with it too.
    await t.ctx.db.deleteFrom("webhook_deliveries").where("id", ">=", d1).execute();
    await t.ctx.db.deleteFrom("messages").where("id", "=", m1).execute();
    await t.ctx.db.deleteFrom("rooms").where("id", "=", r1).execute();
    const r2 = await room();
    const m2 = await message(r2);
    expect(r2).toBeGreaterThan(r1);
    expect(m2).toBeGreaterThan(m1);
    expect(await newestDelivery()).toBeGreaterThan(d1);
    expect(webhook).toBeGreaterThan(0);
  });
});
