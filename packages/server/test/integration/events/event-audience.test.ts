import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  EVENT_NAMES,
  EVENT_TYPES,
  type EventDataMap,
  type EventName,
} from "../../../src/events/event-catalogue.js";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { waitFor } from "../../helpers/wait-for.js";
import {
  openAuthenticated,
  subscribe,
  type Frame,
  type StreamSocket,
} from "../../helpers/stream-socket.js";

/**
 * Who hears each event of the catalogue, in a room, a direct message, and a direct message
 * promoted to a room: the outbound endpoints (a delivery queued for an endpoint subscribed to every
 * event) and the live stream (an event frame on a member's subscription to the room). The rule is
 * the catalogue's, applied by the spine: no caller passes an audience, so every event is emitted
 * here the same way, with only its room changing.
 */
type Kind = "room" | "dm" | "promoted";

/** Outbound endpoints hear it in: */
const OUTBOUND: Record<EventName, readonly Kind[]> = {
  MESSAGE_CREATED: ["room", "promoted"],
  MESSAGE_UPDATED: ["room", "promoted"],
  MESSAGE_DELETED: ["room", "promoted"],
  REACTION_ADDED: ["room", "promoted"],
  REACTION_REMOVED: ["room", "promoted"],
  USER_JOINED_ROOM: ["room", "promoted"],
  USER_LEFT_ROOM: ["room", "promoted"],
  ROOM_CREATED: ["room", "promoted"],
  ROOM_DELETED: ["room", "promoted"],
  FILE_UPLOADED: ["room", "promoted"],
  // Safety and admin events carry no content: they reach webhooks for a DM too.
  FILE_INFECTION_DETECTED: ["room", "dm", "promoted"],
  ADMIN_USER_DISABLED: ["room", "dm", "promoted"],
  ADMIN_USER_DELETED: ["room", "dm", "promoted"],
  ADMIN_ROOM_DELETED: ["room", "dm", "promoted"],
  MESSAGE_AUTO_MODERATION_FLAGGED: ["room", "dm", "promoted"],
  MESSAGE_AUTO_MODERATION_QUARANTINED: ["room", "dm", "promoted"],
  WEBHOOK_ENDPOINT_DISABLED: ["room", "dm", "promoted"],
};

/** What a member subscribed to the room sees on the live stream, whatever the room's kind. */
const STREAM: Record<EventName, "frame" | "ends-subscription" | "ends-user" | "nothing"> = {
  MESSAGE_CREATED: "frame",
  MESSAGE_UPDATED: "frame",
  MESSAGE_DELETED: "frame",
  REACTION_ADDED: "frame",
  REACTION_REMOVED: "frame",
  USER_JOINED_ROOM: "frame",
  USER_LEFT_ROOM: "frame",
  ROOM_CREATED: "nothing",
  ROOM_DELETED: "frame",
  FILE_UPLOADED: "nothing",
  FILE_INFECTION_DETECTED: "nothing",
  ADMIN_USER_DISABLED: "ends-user",
  ADMIN_USER_DELETED: "ends-user",
  ADMIN_ROOM_DELETED: "ends-subscription",
  MESSAGE_AUTO_MODERATION_FLAGGED: "nothing",
  MESSAGE_AUTO_MODERATION_QUARANTINED: "nothing",
  WEBHOOK_ENDPOINT_DISABLED: "nothing",
};

describeEachDialect("who hears each event, by room kind, on $name", (dialect) => {
  let t: TestApp;
  let origin: string;
  let ada: TestUser;
  let ender: TestUser;
  let webhookId: number;
  const rooms = {} as Record<Kind, number>;

  beforeAll(async () => {
    t = await createTestApp(dialect, { presenceGraceMs: 600_000 });
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    ada = await t.user("user", `ada-${dialect.name}`);
    const bo = await t.user("user", `bo-${dialect.name}`);
    const cy = await t.user("user", `cy-${dialect.name}`);
    ender = await t.user("user", `ender-${dialect.name}`);
    const hook = await t.app.inject({
      method: "POST",
      url: "/api/admin/webhooks",
      headers: t.admin.headers,
      // Never sent (no dispatcher runs): the queued rows are what this test reads.
      payload: {
        name: "hears everything",
        url: "http://127.0.0.1:9/",
        secret: "audience-secret-0123456789",
        events: [...EVENT_NAMES],
      },
    });
    expect(hook.statusCode).toBe(201);
    webhookId = hook.json().id;
    /** POSTs as Ada and answers the id of what was created. */
    const create = async (url: string, payload: object): Promise<number> => {
      const res = await t.app.inject({ method: "POST", url, headers: ada.headers, payload });
      expect(res.statusCode).toBeLessThan(300);
      return res.json().id;
    };
    rooms.room = await create("/api/rooms", { name: "a room" });
    rooms.dm = await create("/api/dms", { userId: bo.id });
    rooms.promoted = await create("/api/dms", { userId: cy.id });
    const promoted = await t.app.inject({
      method: "POST",
      url: `/api/dms/${rooms.promoted}/promote`,
      headers: ada.headers,
      payload: { name: "promoted" },
    });
    expect(promoted.json()).toMatchObject({ id: rooms.promoted, kind: "room" });
  });
  afterAll(async () => {
    await t?.close();
  });

  async function queued(event: EventName): Promise<number> {
    const row = await t.ctx.db
      .selectFrom("webhook_deliveries")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("webhook_id", "=", webhookId)
      .where("event", "=", event)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async function post(roomId: number, content: string): Promise<number> {
    const response = await t.app.inject({
      method: "POST",
      url: `/api/rooms/${roomId}/messages`,
      headers: ada.headers,
      payload: { content },
    });
    expect(response.statusCode).toBe(201);
    return response.json().id;
  }

  /** Ada edits (PATCH) or deletes (DELETE) her message `id` in the room. */
  async function change(roomId: number, id: number, method: "PATCH" | "DELETE"): Promise<number> {
    const response = await t.app.inject({
      method,
      url: `/api/rooms/${roomId}/messages/${id}`,
      headers: ada.headers,
      ...(method === "PATCH" ? { payload: { content: "hello, edited" } } : {}),
    });
    expect(response.statusCode).toBe(method === "PATCH" ? 200 : 204);
    return id;
  }

  /** Posts a message and waits for its frame. */
  async function barrier(socket: StreamSocket, roomId: number): Promise<void> {
    const id = await post(roomId, "barrier");
    await socket.next((f) => f.event === "MESSAGE_CREATED" && f.data.messageId === id);
  }

  function sample<E extends EventName>(event: E, roomId: number): EventDataMap[E] {
    const data = { ...EVENT_TYPES[event].sample } as Record<string, unknown>;
    if ("roomId" in data) data.roomId = roomId;
    if ("username" in data) data.username = ender.username;
    return data as unknown as EventDataMap[E];
  }

  async function subscriptions(): Promise<number> {
    const text = (await t.app.inject({ url: "/metrics" })).body;
    const match = /^parley_stream_subscriptions (\d+)/m.exec(text);
    if (!match) throw new Error("parley_stream_subscriptions is not on /metrics");
    return Number(match[1]);
  }

  for (const kind of ["room", "dm", "promoted"] as const) {
    it(`in a ${kind === "promoted" ? "DM promoted to a room" : kind}`, async () => {
      const roomId = rooms[kind];
      const socket = await openAuthenticated(origin, ada.token);
      let enders: StreamSocket | undefined;
      let endersClosed = false;
      const openEnders = async () => {
        endersClosed = false;
        enders = await openAuthenticated(origin, ender.token);
        void enders.closed.then(() => (endersClosed = true));
      };
      await openEnders();
      expect(await subscribe(socket, roomId)).toMatchObject({ type: "subscribed" });
      await barrier(socket, roomId);
      const heard: Record<string, { outbound: boolean; stream: string }> = {};
      const expected: typeof heard = {};
      try {
        for (const event of EVENT_NAMES) {
          expected[event] = { outbound: OUTBOUND[event].includes(kind), stream: STREAM[event] };
          const before = await queued(event);
          const seen = socket.frames.length;
          let posted: number | undefined;
          if (event === "MESSAGE_CREATED") posted = await post(roomId, "hello");
          else if (event === "MESSAGE_UPDATED")
            posted = await change(roomId, await post(roomId, "hello"), "PATCH");
          else if (event === "MESSAGE_DELETED")
            posted = await change(roomId, await post(roomId, "hello"), "DELETE");
          else await t.ctx.database.transaction((tx) => tx.emit(event, sample(event, roomId)));
          const outbound = (await queued(event)) - before;
          expect(outbound, `${event} deliveries`).toBeLessThanOrEqual(1);
          // Everything committed earlier has reached the stream once a later post's frame has, or
          // once the subscription has ended (then that frame never comes).
          const id = await post(roomId, "barrier");
          let settled = false;
          const outcome = await Promise.race([
            socket
              .next((f) => f.event === "MESSAGE_CREATED" && f.data.messageId === id)
              .then(
                () => "frame",
                () => "no frame",
              ),
            waitFor("the subscription to end", async () =>
              settled ? "settled" : (await subscriptions()) === 0 ? "ended" : undefined,
            ),
          ]);
          settled = true;
          const ended = outcome === "ended";
          await new Promise((resolve) => setImmediate(resolve));
          const frames = socket.frames
            .slice(seen)
            .filter(
              (f: Frame) =>
                f.type === "event" &&
                f.event === event &&
                f.roomId === roomId &&
                (posted === undefined || f.data.messageId === posted),
            );
          let stream = "nothing";
          if (frames.length > 0) stream = "frame";
          else if (ended) stream = "ends-subscription";
          else if (endersClosed) stream = "ends-user";
          heard[event] = { outbound: outbound === 1, stream };
          if (ended) expect(await subscribe(socket, roomId)).toMatchObject({ type: "subscribed" });
          if (endersClosed) await openEnders();
        }
      } finally {
        await socket.close();
        await enders?.close();
      }
      expect(heard).toEqual(expected);
    });
  }
});
