import crypto from "node:crypto";
import type { LightMyRequestResponse } from "fastify";
import type { TestApp } from "../../helpers/build-app.js";
import { createRoom } from "../../helpers/fixtures.js";

export interface CreatedWebhook {
  id: number;
  roomId: number;
  token: string;
  url: string;
  slackUrl: string;
  tokenLast8: string;
  displayName: string;
  avatarUrl: string | null;
}

export async function createWebhook(
  t: TestApp,
  body: Record<string, unknown> = {},
): Promise<CreatedWebhook> {
  const roomId = (body.roomId as number | undefined) ?? (await createRoom(t)).id;
  const res = await t.app.inject({
    method: "POST",
    url: "/api/admin/inbound-webhooks",
    headers: t.admin.headers,
    payload: { roomId, displayName: "CI Bot", ...body },
  });
  if (res.statusCode !== 201) throw new Error(`create failed: ${res.statusCode} ${res.body}`);
  return res.json();
}

export function ingestPath(token: string, slack = false): string {
  return `/api/public/webhooks/ingest/${token}${slack ? "/slack" : ""}`;
}

export function ingest(
  t: TestApp,
  token: string,
  payload: unknown,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: "POST",
    url: ingestPath(token),
    headers: { "content-type": "application/json", ...headers },
    payload: typeof payload === "string" ? payload : JSON.stringify(payload),
  });
}

export function ingestSlack(
  t: TestApp,
  token: string,
  payload: unknown,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: "POST",
    url: ingestPath(token, true),
    headers: { "content-type": "application/json", ...headers },
    payload: typeof payload === "string" ? payload : JSON.stringify(payload),
  });
}

export async function messagesOf(t: TestApp, roomId: number) {
  return t.ctx.db
    .selectFrom("messages")
    .selectAll()
    .where("room_id", "=", roomId)
    .orderBy("id", "asc")
    .execute();
}

/** A token of the right shape that no webhook has. */
export function unknownToken(): string {
  return crypto.randomBytes(32).toString("base64url");
}
