import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startDeliveryWork, type BackgroundWork } from "../../../src/background-work.js";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { startReceiver, type Receiver } from "../../helpers/receiver.js";
import { openAuthenticated, subscribe } from "../../helpers/stream-socket.js";

const GRACE_MS = 400;

interface Delivery {
  event: string;
  data: { roomId: number; username: string; via: string };
}

describeEachDialect("presence events to outbound webhooks on $name", (dialect) => {
  let t: TestApp;
  let work: BackgroundWork[];
  let receiver: Receiver;
  let origin: string;
  let dana: TestUser;
  let roomId: number;

  const deliveries = (): Delivery[] =>
    receiver.requests.map((request) => JSON.parse(request.body.toString()) as Delivery);

  beforeAll(async () => {
    [t, receiver] = await Promise.all([
      createTestApp(dialect, { presenceGraceMs: GRACE_MS, presenceHeartbeatMs: 200 }),
      startReceiver(),
    ]);
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    work = startDeliveryWork(t.ctx, t.app.metrics);
    dana = await t.user("user", `dana-${dialect.name}`);
    const room = await t.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: dana.headers,
      payload: { name: "presence" },
    });
    roomId = room.json().id;
    const hook = await t.app.inject({
      method: "POST",
      url: "/api/admin/webhooks",
      headers: t.admin.headers,
      payload: {
        name: "presence receiver",
        url: receiver.url,
        secret: "presence-secret-0123456789",
        events: ["USER_JOINED_ROOM", "USER_LEFT_ROOM"],
      },
    });
    expect(hook.statusCode).toBe(201);
  });
  afterAll(async () => {
    for (const part of work ?? []) await part.stop();
    await t?.close();
    await receiver?.close();
  });

  it("fires USER_JOINED_ROOM via presence once, and USER_LEFT_ROOM the grace period after the last connection", async () => {
    const first = await openAuthenticated(origin, dana.token);
    await subscribe(first, roomId);
    const [joined] = await receiver.waitForRequests(1);
    expect(JSON.parse(joined!.body.toString())).toMatchObject({
      event: "USER_JOINED_ROOM",
      data: { roomId, username: dana.username, via: "presence" },
    });

    // A second connection of the same user changes nothing: still one presence.
    const second = await openAuthenticated(origin, dana.token);
    await subscribe(second, roomId);
    await first.close();
    await second.close();
    const closedAt = Date.now();

    const [, left] = await receiver.waitForRequests(2, 10_000);
    expect(JSON.parse(left!.body.toString())).toMatchObject({
      event: "USER_LEFT_ROOM",
      data: { roomId, username: dana.username, via: "presence" },
    });
    expect(left!.receivedAt - closedAt).toBeGreaterThanOrEqual(GRACE_MS - 5);
    expect(deliveries().map((d) => d.event)).toEqual(["USER_JOINED_ROOM", "USER_LEFT_ROOM"]);
  });

  it("fires nothing for a reconnect within the grace period", async () => {
    const before = receiver.requests.length;
    const first = await openAuthenticated(origin, dana.token);
    await subscribe(first, roomId);
    await receiver.waitForRequests(before + 1);
    await first.close();
    const again = await openAuthenticated(origin, dana.token);
    await subscribe(again, roomId);
    // A marker event; the reconnect's leave, had it fired, would show up in the final list below
    // (it would be due a grace period after the FIRST close, before the final leaves).
    await t.app.inject({
      method: "POST",
      url: `/api/rooms/${roomId}/call/join`,
      headers: dana.headers,
    });
    await receiver.waitForRequests(before + 2);
    expect(
      deliveries()
        .slice(before)
        .map((d) => [d.event, d.data.via]),
    ).toEqual([
      ["USER_JOINED_ROOM", "presence"],
      ["USER_JOINED_ROOM", "call"],
    ]);
    await again.close();
    // The grace ends both: the call first, then the presence.
    await receiver.waitForRequests(before + 4, 10_000);
    expect(
      deliveries()
        .slice(before + 2)
        .map((d) => [d.event, d.data.via]),
    ).toEqual([
      ["USER_LEFT_ROOM", "call"],
      ["USER_LEFT_ROOM", "presence"],
    ]);
  });
});
