import type { EventName } from "../../../src/events/event-catalogue.js";
import type { TestApp, TestUser } from "../../helpers/build-app.js";

export type SeenEvent = [EventName, unknown];

/** Records every committed event until `stop()`; `events` is the list so far. */
export function recordEvents(t: TestApp): { events: SeenEvent[]; stop(): void } {
  const events: SeenEvent[] = [];
  const stop = t.ctx.spine.onEventCommitted((event, data) => events.push([event, data]));
  return { events, stop };
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
  // A post in one statement (PostgreSQL): the statement fails after its fan-out CTE wrote, by
  // dividing by the count of rows it wrote minus itself.
  const originalInStatement = spine.emitInStatement.bind(spine);
  spine.emitInStatement = ((...args: Parameters<typeof originalInStatement>) => {
    const emit = originalInStatement(...args);
    return {
      ...emit,
      sql: `${emit.sql},\n"failing" as (select 1 / (${emit.queued} - ${emit.queued}) as "x")`,
      notified: `${emit.notified} + (select "x" from "failing")`,
    };
  }) as typeof spine.emitInStatement;
  return () => {
    spine.fanOut = original;
    spine.emitInStatement = originalInStatement;
  };
}
