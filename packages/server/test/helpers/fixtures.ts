/**
 * The rows most tests start from, made the way the product makes them: rooms and endpoints
 * through the API (so they carry what the API adds: membership, events, validation), or an
 * endpoint straight in the database when a test needs one the API would refuse (a loopback URL
 * under strict settings, a secret sealed with another key).
 */
import crypto from "node:crypto";
import { sealSecret } from "../../src/config/secret-box.js";
import type { EventName } from "../../src/events/event-catalogue.js";
import type { TestApp, TestUser } from "./build-app.js";

/** A `parley serve` process reached over HTTP with a token, or an in-process app (as its admin). */
export type ApiTarget = TestApp | { readonly url: string; readonly token: string };

/** Calls the API and answers the status and the parsed JSON body (undefined when empty). */
export async function callApi(
  target: ApiTarget,
  method: "GET" | "POST" | "PATCH" | "DELETE",
  path: string,
  body?: unknown,
  as?: TestUser,
): Promise<{ status: number; json: unknown }> {
  if ("app" in target) {
    const res = await target.app.inject({
      method,
      url: path,
      headers: (as ?? target.admin).headers,
      ...(body === undefined ? {} : { payload: body as object }),
    });
    return { status: res.statusCode, json: res.body === "" ? undefined : res.json() };
  }
  const res = await fetch(`${target.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${as?.token ?? target.token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text === "" ? undefined : JSON.parse(text) };
}

/** Creates a room through the API, owned (and joined) by `owner`. */
export async function createRoom(
  target: TestApp,
  owner: TestUser = target.admin,
  name = `room-${crypto.randomBytes(4).toString("hex")}`,
): Promise<{ id: number }> {
  const res = await callApi(target, "POST", "/api/rooms", { name }, owner);
  if (res.status !== 201)
    throw new Error(`creating a room answered ${res.status}: ${JSON.stringify(res.json)}`);
  return res.json as { id: number };
}

export const SECRET = "whsec-Ut9x4kQm2Lp7Zr8VnB3c";

/** A valid body for POST /api/admin/webhooks, with `overrides` on top. */
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

/** Creates an outbound endpoint through the admin API and fails loudly unless it answers 201. */
export async function createEndpoint(
  target: ApiTarget,
  overrides: Record<string, unknown> = {},
): Promise<CreatedEndpoint> {
  const res = await callApi(target, "POST", "/api/admin/webhooks", endpointBody(overrides));
  if (res.status !== 201)
    throw new Error(`creating the webhook answered ${res.status}: ${JSON.stringify(res.json)}`);
  return res.json as CreatedEndpoint;
}

/**
 * Writes an outbound endpoint straight into the database, its secret sealed as the admin API
 * seals it (or `secretCiphertext` as given), without the API's URL checks.
 */
export async function insertEndpoint(
  t: TestApp,
  options: {
    url?: string;
    events?: readonly EventName[];
    enabled?: boolean;
    secret?: string;
    secretCiphertext?: string;
  } = {},
): Promise<{ id: number; secret: string }> {
  const secret = options.secret ?? `whsec_${crypto.randomBytes(12).toString("hex")}`;
  const now = Date.now();
  const row = await t.ctx.db
    .insertInto("webhooks")
    .values({
      name: "test endpoint",
      url: options.url ?? "https://receiver.example/hook",
      secret_ciphertext: options.secretCiphertext ?? sealSecret(t.ctx.keys.secretKey, secret),
      events: JSON.stringify(options.events ?? ["ADMIN_USER_DISABLED"]),
      enabled: options.enabled === false ? 0 : 1,
      created_at: now,
      updated_at: now,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return { id: row.id, secret };
}
