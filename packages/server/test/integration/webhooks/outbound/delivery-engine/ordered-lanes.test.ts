import type { Webhook } from "@parley/client";
import { setTimeout as sleep } from "node:timers/promises";
import { expect, it, onTestFinished } from "vitest";
import type { ConfigOverrides } from "../../../../../src/config/load-config.js";
import {
  claimDeliveries,
  nextLaneCursors,
} from "../../../../../src/webhooks/outbound/delivery-engine/claim-deliveries.js";
import {
  describeEachDialect,
  describeEachOf,
  POSTGRES,
  type TestDialect,
} from "../../../../helpers/dialects.js";
import type { RecordedRequest, Receiver } from "../../../../helpers/receiver.js";
import { waitFor } from "../../../../helpers/wait-for.js";
import { startOperatingApp, type OperatingApp } from "../admin-api/operating-fixture.js";

/** What a receiver saw of one request: the event's room (null without one) and its key. */
interface Seen {
  roomId: number | null;
  username: string;
  at: number;
}

function seen(request: RecordedRequest): Seen {
  const body = JSON.parse(request.body.toString("utf8")) as {
    data: { roomId?: number; username: string };
  };
  return { roomId: body.data.roomId ?? null, username: body.data.username, at: request.receivedAt };
}

/**
 * The receiver's view of ordering: in each lane (by `laneOf`), the events as they arrived, every
 * attempt of an event before any attempt of a later one. `order` is the lane's events in the
 * order they were emitted; the answer is the arrivals per lane, repeats collapsed.
 */
function checkLanes(
  requests: RecordedRequest[],
  order: readonly string[],
  laneOf: (s: Seen) => string,
): Map<string, string[]> {
  const lanes = new Map<string, string[]>();
  for (const request of requests) {
    const s = seen(request);
    const lane = laneOf(s);
    const arrived = lanes.get(lane) ?? [];
    const last = arrived.at(-1);
    if (last !== s.username) {
      // A new event in this lane: never one already seen (it would be a later event's overtaking
      // by an earlier one's retry), and never an earlier one than the last.
      expect(arrived, `${s.username} came back in lane ${lane}`).not.toContain(s.username);
      if (last !== undefined)
        expect(order.indexOf(s.username), `${s.username} after ${last}`).toBeGreaterThan(
          order.indexOf(last),
        );
      arrived.push(s.username);
    }
    lanes.set(lane, arrived);
  }
  return lanes;
}

async function app(dialect: TestDialect, overrides: ConfigOverrides = {}): Promise<OperatingApp> {
  const d = await startOperatingApp(dialect, overrides);
  onTestFinished(() => d.close());
  return d;
}

const ROOM_EVENTS = ["USER_JOINED_ROOM", "ADMIN_USER_DISABLED"] as const;

async function orderedEndpoint(
  d: OperatingApp,
  receiver: Receiver,
  ordering: "room" | "endpoint",
): Promise<Webhook> {
  return d.create({ url: receiver.url, events: [...ROOM_EVENTS], ordering });
}

/** A room event (roomId given) or an event without a room (null), keyed by `username`. */
async function emit(d: OperatingApp, roomId: number | null, username: string): Promise<void> {
  if (roomId === null) await d.emitUser(username);
  else await d.emit("USER_JOINED_ROOM", { roomId, username, via: "membership" });
}

/** Counts the requests in flight at once, per key, answering each after `delayMs`. */
function concurrency(receiver: Receiver, key: (s: Seen) => string, delayMs: number) {
  const inFlight = new Map<string, number>();
  let most = 0;
  receiver.respondWith(async (request) => {
    const k = key(seen(request));
    const now = (inFlight.get(k) ?? 0) + 1;
    inFlight.set(k, now);
    most = Math.max(most, now);
    await sleep(delayMs);
    inFlight.set(k, inFlight.get(k)! - 1);
    return { status: 204 };
  });
  return { most: () => most };
}

describeEachDialect("ordered delivery lanes on $name", (dialect) => {
  it('keeps each room\'s events in commit order through retries, one attempt in flight per room, with "room"', async () => {
    const d = await app(dialect);
    const receiver = await d.receiver();
    await orderedEndpoint(d, receiver, "room");
    const perRoom = new Map<string, number>();
    let most = 0;
    // The second event of each lane fails twice; every answer takes 15 ms.
    const failures = new Map<string, number>();
    receiver.respondWith(async (request) => {
      const s = seen(request);
      const lane = String(s.roomId);
      const now = (perRoom.get(lane) ?? 0) + 1;
      perRoom.set(lane, now);
      most = Math.max(most, now);
      await sleep(15);
      perRoom.set(lane, perRoom.get(lane)! - 1);
      if (s.username.endsWith("-1")) {
        const n = failures.get(s.username) ?? 0;
        failures.set(s.username, n + 1);
        if (n < 2) return { status: 500 };
      }
      return { status: 204 };
    });
    const order: string[] = [];
    for (let i = 0; i < 5; i++) {
      for (const roomId of [11, 12, 13, null]) {
        const username = `r${roomId ?? "none"}-${i}`;
        order.push(username);
        await emit(d, roomId, username);
      }
    }
    await receiver.waitForRequests(20 + 4 * 2, 15_000);
    await d.dispatcher.idle();
    const lanes = checkLanes(receiver.requests, order, (s) => String(s.roomId));
    expect([...lanes.keys()].sort()).toEqual(["11", "12", "13", "null"]);
    for (const [lane, arrived] of lanes)
      expect(arrived).toEqual(
        [0, 1, 2, 3, 4].map((i) => `r${lane === "null" ? "none" : lane}-${i}`),
      );
    expect(receiver.requests).toHaveLength(28);
    expect(most).toBe(1);
  });

  it('sends one attempt at a time, in commit order, for the whole endpoint with "endpoint"', async () => {
    const d = await app(dialect);
    const receiver = await d.receiver();
    await orderedEndpoint(d, receiver, "endpoint");
    const counted = concurrency(receiver, () => "endpoint", 5);
    const order: string[] = [];
    for (let i = 0; i < 6; i++) {
      for (const roomId of [21, 22, null]) {
        const username = `e${roomId ?? "none"}-${i}`;
        order.push(username);
        await emit(d, roomId, username);
      }
    }
    await receiver.waitForRequests(18, 10_000);
    await d.dispatcher.idle();
    expect(receiver.requests.map((r) => seen(r).username)).toEqual(order);
    expect(counted.most()).toBe(1);
  });

  it("holds a lane behind its failing head without slowing the other lanes or endpoints, and shows it in heldLanes", async () => {
    // A failed attempt waits 1.5 s for its retry.
    const d = await app(dialect, { webhookBackoffBaseMs: 1_500, webhookBackoffMaxMs: 1_500 });
    const receiver = await d.receiver();
    const other = await d.receiver();
    const endpoint = await orderedEndpoint(d, receiver, "room");
    await d.create({ url: other.url, events: [...ROOM_EVENTS] });
    let healthy = false;
    receiver.respondWith((request) =>
      seen(request).roomId === 31 && !healthy ? { status: 503 } : { status: 204 },
    );
    await emit(d, 31, "held-0");
    await receiver.waitForRequests(1);
    const failedAt = Date.now();
    await emit(d, 31, "held-1");
    await emit(d, 31, "held-2");
    for (let i = 0; i < 5; i++) await emit(d, 32, `free-${i}`);
    // Room 32 and the other endpoint get everything at once; room 31 waits for its head's retry.
    const arrived = await receiver.waitForRequests(6, 1_000);
    expect(Date.now() - failedAt).toBeLessThan(1_000);
    expect(arrived.slice(1).map((r) => seen(r).username)).toEqual(
      [0, 1, 2, 3, 4].map((i) => `free-${i}`),
    );
    await other.waitForRequests(8, 1_000);

    const head = (await d.deliveries()).find(
      (row) => row.webhook_id === endpoint.id && row.body.includes('"held-0"'),
    )!;
    const shown = (await d.api("GET", `/api/admin/webhooks/${endpoint.id}`)).json() as Webhook;
    expect(shown.ordering).toBe("room");
    expect(shown.heldLanes).toEqual([
      { roomId: 31, deliveryId: head.id, since: expect.any(String) as string },
    ]);
    expect(Math.abs(Date.parse(shown.heldLanes[0]!.since) - failedAt)).toBeLessThan(500);
    const listed = (await d.api("GET", "/api/admin/webhooks")).json() as { items: Webhook[] };
    expect(listed.items.find((w) => w.id === endpoint.id)!.heldLanes).toEqual(shown.heldLanes);

    healthy = true;
    await receiver.waitForRequests(9, 5_000);
    await d.dispatcher.idle();
    expect(
      receiver.requests.filter((r) => seen(r).roomId === 31).map((r) => seen(r).username),
    ).toEqual(["held-0", "held-0", "held-1", "held-2"]);
    const after = (await d.api("GET", `/api/admin/webhooks/${endpoint.id}`)).json() as Webhook;
    expect(after.heldLanes).toEqual([]);
  });

  it("sends a redelivery after what its lane already had queued", async () => {
    const d = await app(dialect, { webhookBackoffBaseMs: 800, webhookBackoffMaxMs: 800 });
    const receiver = await d.receiver();
    const endpoint = await orderedEndpoint(d, receiver, "room");
    let failing = false;
    receiver.respondWith(() => (failing ? { status: 500 } : { status: 204 }));
    await emit(d, 41, "first");
    await receiver.waitForRequests(1);
    await d.dispatcher.idle();
    failing = true;
    await emit(d, 41, "second");
    await receiver.waitForRequests(2);
    await emit(d, 41, "third");
    const rows = await d.deliveries();
    const first = rows.find((row) => row.body.includes('"first"'))!;
    const redelivered = await d.api(
      "POST",
      `/api/admin/webhooks/${endpoint.id}/deliveries/${first.id}/redeliver`,
    );
    expect(redelivered.statusCode).toBe(202);
    failing = false;
    await receiver.waitForRequests(5, 5_000);
    await d.dispatcher.idle();
    expect(receiver.requests.map((r) => seen(r).username)).toEqual([
      "first",
      "second",
      "second",
      "third",
      "first",
    ]);
  });

  it("leaves a lane whose head another process leased blocked until the lease runs out, then takes that head again", async () => {
    const d = await app(dialect);
    await d.dispatcher.stop();
    const receiver = await d.receiver();
    const endpoint = await orderedEndpoint(d, receiver, "room");
    await emit(d, 51, "head");
    await emit(d, 51, "next");
    await emit(d, 52, "elsewhere");
    const ids = (await d.deliveries()).map((row) => row.id);
    const now = Date.now() + 10;
    const options = { limit: 10, leaseMs: 5_000, perEndpointLimit: 8 };
    // The process that took the head dies with it.
    const dead = await claimDeliveries(d.t.ctx.db, { ...options, workerId: "dead", now });
    expect(dead.map((row) => row.id).sort((a, b) => a - b)).toEqual([ids[0], ids[2]]);
    expect(dead.every((row) => row.lane !== null)).toBe(true);
    // Meanwhile another process finds nothing: the lane's next row waits behind the leased head.
    const meanwhile = await claimDeliveries(d.t.ctx.db, {
      ...options,
      workerId: "alive",
      now: now + 4_999,
    });
    expect(meanwhile).toEqual([]);
    const after = await claimDeliveries(d.t.ctx.db, {
      ...options,
      workerId: "alive",
      now: now + 5_001,
    });
    expect(after.map((row) => row.id).sort((a, b) => a - b)).toEqual([ids[0], ids[2]]);
    expect(endpoint.ordering).toBe("room");
  });

  it("claims a free lane's head at once while fifty lanes are held with twenty deliveries queued behind each", async () => {
    const d = await app(dialect);
    await d.dispatcher.stop();
    const receiver = await d.receiver();
    const endpoint = await orderedEndpoint(d, receiver, "room");
    // 50 lanes of 20 deliveries each, every head failed and waiting for a retry far away.
    const at = Date.now();
    for (let room = 1; room <= 50; room++)
      for (let i = 0; i < 20; i++) await emit(d, 1_000 + room, `h${room}-${i}`);
    await d.t.ctx.db
      .updateTable("webhook_deliveries")
      .set({ status: "FAILED", attempts: 1, next_attempt_at: at + 3_600_000 })
      .where("body", "like", '%-0"%')
      .execute();
    await emit(d, 2_000, "free");
    const claimed = await claimDeliveries(d.t.ctx.db, {
      limit: 10,
      leaseMs: 5_000,
      perEndpointLimit: 8,
      workerId: "w",
      now: Date.now() + 5,
    });
    expect(claimed).toHaveLength(1);
    expect(claimed[0]!.body).toContain('"free"');
    const shown = (await d.api("GET", `/api/admin/webhooks/${endpoint.id}`)).json() as Webhook;
    expect(shown.heldLanes).toHaveLength(20);
    expect(shown.heldLanes.map((lane) => lane.roomId)).toEqual(
      Array.from({ length: 20 }, (_, i) => 1_001 + i),
    );
  });

  it("moves queued deliveries into lanes, and out of them, when the ordering changes", async () => {
    const d = await app(dialect);
    await d.dispatcher.stop();
    const receiver = await d.receiver();
    const endpoint = await d.create({ url: receiver.url, events: [...ROOM_EVENTS] });
    expect(endpoint.ordering).toBe("none");
    expect(endpoint.heldLanes).toEqual([]);
    await emit(d, 61, "a");
    await emit(d, null, "b");
    const lanes = async () => (await d.deliveries()).map((row) => row.lane);
    expect(await lanes()).toEqual([null, null]);
    const patch = (ordering: unknown) =>
      d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { ordering });
    const room = await patch("room");
    expect(room.statusCode).toBe(200);
    expect((room.json() as Webhook).ordering).toBe("room");
    expect((await lanes()).map(Number)).toEqual([61, 0]);
    expect(((await patch("endpoint")).json() as Webhook).ordering).toBe("endpoint");
    expect((await lanes()).map(Number)).toEqual([0, 0]);
    expect(((await patch("none")).json() as Webhook).ordering).toBe("none");
    expect(await lanes()).toEqual([null, null]);
    const refused = await patch("fifo");
    expect(refused.statusCode).toBe(400);
    expect((refused.json() as { code: string }).code).toBe("validation_failed");
    const created = await d.api("POST", "/api/admin/webhooks", {
      name: "bad",
      url: receiver.url,
      secret: "a-long-enough-secret",
      events: ["ADMIN_USER_DISABLED"],
      ordering: "rooms",
    });
    expect(created.statusCode).toBe(400);
    await waitFor("nothing else changed", async () => (await lanes()).length === 2);
  });
});

describeEachOf([POSTGRES])("the ordered lanes' claim on $name", (dialect) => {
  it("takes the lanes in turn from claim to claim, so a room with a long queue does not hold back the rooms after it", async () => {
    const d = await app(dialect);
    await d.dispatcher.stop();
    const receiver = await d.receiver();
    await orderedEndpoint(d, receiver, "room");
    // Room 81's five events are the oldest: taken by age, they would all go before 82's and 83's.
    for (let i = 0; i < 5; i++) await emit(d, 81, `a${i}`);
    await emit(d, 82, "b0");
    await emit(d, 83, "c0");
    const cursors = new Map<number, number>();
    const rooms: number[] = [];
    for (let claim = 0; claim < 5; claim++) {
      const rows = await claimDeliveries(d.t.ctx.db, {
        limit: 1,
        leaseMs: 5_000,
        perEndpointLimit: 8,
        workerId: "w",
        now: Date.now() + 5,
        laneCursors: cursors,
      });
      expect(rows).toHaveLength(1);
      nextLaneCursors(cursors, rows);
      rooms.push(Number(rows[0]!.lane));
      // The attempt succeeded: the lane's next delivery is its head now.
      await d.t.ctx.db
        .updateTable("webhook_deliveries")
        .set({ status: "SUCCESS", attempts: 1, next_attempt_at: null, locked_until: null })
        .where("id", "=", rows[0]!.id)
        .execute();
    }
    expect(rooms).toEqual([81, 82, 83, 81, 81]);
  });

  it("runs the plain claim while no delivery is in a lane, and the full one as soon as one is, never taking a lane's row out of turn", async () => {
    const d = await app(dialect);
    await d.dispatcher.stop();
    const receiver = await d.receiver();
    await d.create({ url: receiver.url, events: [...ROOM_EVENTS] });
    const options = { limit: 10, leaseMs: 5_000, perEndpointLimit: 8, workerId: "w" };
    const mode = { full: true };
    const done = (ids: number[]) =>
      d.t.ctx.db
        .updateTable("webhook_deliveries")
        .set({ status: "SUCCESS", attempts: 1, next_attempt_at: null, locked_until: null })
        .where("id", "in", ids)
        .execute();
    const claim = () => claimDeliveries(d.t.ctx.db, { ...options, now: Date.now() + 5, mode });

    await emit(d, null, "u1");
    await emit(d, null, "u2");
    const first = await claim();
    expect(first.map((row) => row.lane)).toEqual([null, null]);
    // Nothing is in a lane: the next claim is the plain one.
    expect(mode.full).toBe(false);
    await done(first.map((row) => row.id));

    // An ordered endpoint's events arrive: the plain claim takes the unordered endpoint's copies
    // only, and says the next claim must be the full one.
    const ordered = await orderedEndpoint(d, receiver, "room");
    await emit(d, 7, "a1");
    await emit(d, 7, "a2");
    const second = await claim();
    expect(second.map((row) => row.lane)).toEqual([null, null]);
    expect(mode.full).toBe(true);
    const third = await claim();
    expect(third).toHaveLength(1);
    expect(third[0]!.lane).not.toBeNull();
    expect(third[0]!.body).toContain('"a1"');
    expect(mode.full).toBe(true);
    await done([...second, ...third].map((row) => row.id));

    // A plain claim that finds nothing runs the full one at once: the lane's next row goes now.
    mode.full = false;
    const fourth = await claim();
    expect(fourth).toHaveLength(1);
    expect(fourth[0]!.body).toContain('"a2"');
    await done(fourth.map((row) => row.id));
    // No endpoint orders any more and no lane holds a delivery: back to the plain claim once a
    // claim says so.
    const unordered = await d.api("PATCH", `/api/admin/webhooks/${ordered.id}`, {
      ordering: "none",
    });
    expect(unordered.statusCode).toBe(200);
    await emit(d, 7, "u3");
    await claim();
    expect(mode.full).toBe(false);
  });
});
