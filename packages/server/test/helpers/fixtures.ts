/**
 * The rows most tests start from, made the way the product makes them: rooms and endpoints
 * through the API (so they carry what the API adds: membership, events, validation), or an
 * endpoint straight in the database when a test needs one the API would refuse (a loopback URL
 * under strict settings, a secret sealed with another key).
 */
import crypto from "node:crypto";
import {
  request,
  type CreateWebhookParams,
  type FetchLike,
  type RequestInterface,
  type Room,
  type Webhook,
} from "@parley/client";
import type { InjectOptions } from "fastify";
import { sealSecret } from "../../src/config/secret-box.js";
import type { EventName } from "../../src/events/event-catalogue.js";
import type { TestApp, TestUser } from "./build-app.js";

/** A `parley serve` process reached over HTTP with a token, or an in-process app (as its admin). */
export type ApiTarget = TestApp | { readonly url: string; readonly token: string };

/**
 * `@parley/client`'s `request`, bound to `target` and to `as`'s token (default: the admin's), so
 * tests call the API as users do, with its typed routes; an answer other than 2xx throws its
 * `RequestError`. An in-process app is called through `app.inject` (no port is opened), a
 * `parley serve` process over HTTP.
 */
export function apiFor(target: ApiTarget, as?: TestUser): RequestInterface {
  if ("app" in target) {
    return request.defaults({
      baseUrl: IN_PROCESS,
      headers: (as ?? target.admin).headers,
      request: { fetch: injectFetch(target.app) },
    });
  }
  return request.defaults({
    baseUrl: target.url,
    headers: { authorization: `Bearer ${as?.token ?? target.token}` },
  });
}

/** The base URL of calls to an in-process app: never resolved, `app.inject` answers them. */
const IN_PROCESS = "http://parley.invalid";

/** A fetch answered by `app.inject`. */
function injectFetch(app: TestApp["app"]): FetchLike {
  return async (input, init) => {
    const url = new URL(input);
    const res = await app.inject({
      method: (init.method ?? "GET") as InjectOptions["method"],
      url: `${url.pathname}${url.search}`,
      headers: Object.fromEntries(new Headers(init.headers)),
      ...(init.body == null ? {} : { payload: init.body as string }),
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      for (const item of Array.isArray(value) ? value : [value])
        if (item !== undefined) headers.append(name, String(item));
    }
    const body = res.rawPayload.length === 0 ? null : new Uint8Array(res.rawPayload);
    return new Response(body, { status: res.statusCode, headers });
  };
}

/** Creates a room through the API, owned (and joined) by `owner`. */
export async function createRoom(
  target: TestApp,
  owner: TestUser = target.admin,
  name = `room-${crypto.randomBytes(4).toString("hex")}`,
): Promise<Room> {
  const { data } = await apiFor(target, owner)("POST /api/rooms", { name });
  return data;
}

/**
 * Posts `count` messages of `content` to a room as `sender` through the API, ten at a time;
 * resolves with their ids in ascending order (a room's order).
 */
export async function postMessages(
  target: TestApp,
  sender: TestUser,
  roomId: number,
  count: number,
  content: string,
): Promise<number[]> {
  const api = apiFor(target, sender);
  const ids: number[] = [];
  for (let i = 0; i < count; i += 10) {
    const batch = Array.from({ length: Math.min(10, count - i) }, async () => {
      const { data } = await api("POST /api/rooms/{roomId}/messages", { roomId, content });
      return data.id;
    });
    ids.push(...(await Promise.all(batch)));
  }
  return ids.sort((x, y) => x - y);
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

/** Creates an outbound endpoint through the admin API (a `RequestError` unless it answers 201). */
export async function createEndpoint(
  target: ApiTarget,
  overrides: Record<string, unknown> = {},
): Promise<Webhook> {
  const { data } = await apiFor(target)("POST /api/admin/webhooks", {
    data: endpointBody(overrides) as CreateWebhookParams,
  });
  return data;
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
  const secret = options.secret ?? `whsec_${crypto.randomBytes(32).toString("base64")}`;
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
