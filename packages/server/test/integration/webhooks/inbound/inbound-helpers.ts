import crypto from "node:crypto";
import type { CreateInboundWebhookParams, InboundWebhookWithToken } from "@parley/client";
import type { LightMyRequestResponse } from "fastify";
import type { TestApp } from "../../../helpers/build-app.js";
import { apiFor, createRoom } from "../../../helpers/fixtures.js";

/** Creates an inbound webhook through the admin API, in a new room unless `body.roomId` names one. */
export async function createWebhook(
  t: TestApp,
  body: Partial<CreateInboundWebhookParams> = {},
): Promise<InboundWebhookWithToken> {
  const roomId = body.roomId ?? (await createRoom(t)).id;
  const { data } = await apiFor(t)("POST /api/admin/inbound-webhooks", {
    displayName: "CI Bot",
    ...body,
    roomId,
  });
  return data;
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
