import type { LightMyRequestResponse } from "fastify";
import type { TestApp } from "../../helpers/build-app.js";
import type { DeliveryStatus } from "../../../src/db/schema.js";

export const SECRET = "whsec-Ut9x4kQm2Lp7Zr8VnB3c";

export function endpointBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: "Audit sink",
    url: "https://hooks.example.com/parley",
    secret: SECRET,
    events: ["ADMIN_USER_DISABLED"],
    ...overrides,
  };
}

export interface CreatedEndpoint {
  id: number;
  name: string;
  url: string;
  events: string[];
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

/** Creates an endpoint through the API and fails loudly if that does not answer 201. */
export async function createEndpoint(
  t: TestApp,
  overrides: Record<string, unknown> = {},
): Promise<CreatedEndpoint> {
  const res = await t.app.inject({
    method: "POST",
    url: "/api/admin/webhooks",
    headers: t.admin.headers,
    payload: endpointBody(overrides),
  });
  if (res.statusCode !== 201) throw new Error(`create answered ${res.statusCode}: ${res.body}`);
  return res.json() as CreatedEndpoint;
}

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
