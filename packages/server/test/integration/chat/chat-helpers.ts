import { EVENT_NAMES, type EventName } from "../../../src/events/event-catalogue.js";
import type { TestApp, TestUser } from "../../helpers/build-app.js";

export type SeenEvent = [EventName, unknown];

/** Records every committed event until `stop()`; `events` is the list so far. */
export function recordEvents(t: TestApp): { events: SeenEvent[]; stop(): void } {
  const events: SeenEvent[] = [];
  const stop = t.ctx.spine.onEventCommitted((event, data) => events.push([event, data]));
  return { events, stop };
}

export async function createRoom(
  t: TestApp,
  owner: TestUser,
  name = "general",
): Promise<{ id: number }> {
  const res = await t.app.inject({
    method: "POST",
    url: "/api/rooms",
    headers: owner.headers,
    payload: { name },
  });
  if (res.statusCode !== 201)
    throw new Error(`creating a room answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

export async function joinRoom(t: TestApp, user: TestUser, roomId: number): Promise<void> {
  const res = await t.app.inject({
    method: "POST",
    url: `/api/rooms/${roomId}/join`,
    headers: user.headers,
  });
  if (res.statusCode !== 200) throw new Error(`joining answered ${res.statusCode}: ${res.body}`);
}

export async function post(
  t: TestApp,
  user: TestUser,
  roomId: number,
  content: string,
  contentFormat?: string,
) {
  return t.app.inject({
    method: "POST",
    url: `/api/rooms/${roomId}/messages`,
    headers: user.headers,
    payload: contentFormat === undefined ? { content } : { content, contentFormat },
  });
}

/** An enabled outbound endpoint subscribed to every event, so fan-out writes delivery rows. */
export async function registerEndpoint(t: TestApp): Promise<number> {
  const now = Date.now();
  const row = await t.ctx.db
    .insertInto("webhooks")
    .values({
      name: "everything",
      url: "https://receiver.example/hook",
      secret_ciphertext: "not-a-real-ciphertext",
      events: JSON.stringify(EVENT_NAMES),
      enabled: 1,
      created_at: now,
      updated_at: now,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function countRows(
  t: TestApp,
  table: "messages" | "files" | "webhook_deliveries" | "rooms" | "moderation_flags",
) {
  const row = await t.ctx.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Makes fan-out throw after it has written its delivery rows, as a failure late in the
 * transaction would; returns the function that restores the spine.
 */
export function failFanOutAfterWriting(t: TestApp): () => void {
  const spine = t.ctx.spine;
  const original = spine.fanOut.bind(spine);
  spine.fanOut = (async (...args: Parameters<typeof original>) => {
    await original(...args);
    throw new Error("fan-out failed after writing deliveries");
  }) as typeof spine.fanOut;
  return () => {
    spine.fanOut = original;
  };
}
