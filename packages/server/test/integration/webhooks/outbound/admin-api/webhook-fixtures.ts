import type { LightMyRequestResponse } from "fastify";
import type { TestApp } from "../../../../helpers/build-app.js";
import type { DeliveryStatus } from "../../../../../src/db/schema.js";

export function admin(
  t: TestApp,
  method: "GET" | "POST" | "PATCH" | "DELETE",
  url: string,
  payload?: object,
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method,
    url,
    headers: t.admin.headers,
    ...(payload === undefined ? {} : { payload }),
  });
}

/** Inserts a delivery row as the spine or the engine would leave it; returns its id. */
export async function insertDelivery(
  t: TestApp,
  webhookId: number,
  row: {
    event?: string;
    status?: DeliveryStatus;
    body?: string;
    attempts?: number;
    createdAt?: number;
    nextAttemptAt?: number | null;
    lastResponseStatus?: number | null;
    /** The spine's event id; left out, the row has none (as rows inserted by hand). */
    eventId?: string;
  } = {},
): Promise<number> {
  const createdAt = row.createdAt ?? Date.now();
  const event = row.event ?? "ADMIN_USER_DISABLED";
  const inserted = await t.ctx.db
    .insertInto("webhook_deliveries")
    .values({
      webhook_id: webhookId,
      event,
      body:
        row.body ??
        JSON.stringify({
          event,
          timestamp: new Date(createdAt).toISOString(),
          webhookId,
          data: { username: "u", adminActor: "admin" },
        }),
      status: row.status ?? "PENDING",
      attempts: row.attempts ?? 0,
      next_attempt_at: row.nextAttemptAt === undefined ? createdAt : row.nextAttemptAt,
      locked_until: null,
      locked_by: null,
      last_response_status: row.lastResponseStatus ?? null,
      created_at: createdAt,
      updated_at: createdAt,
      ...(row.eventId === undefined ? {} : { event_id: row.eventId }),
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return inserted.id;
}

export async function countRows(
  t: TestApp,
  table: "webhooks" | "webhook_deliveries" | "webhook_attempts",
): Promise<number> {
  const row = await t.ctx.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
