import type { Updateable } from "kysely";
import type { AppContext } from "../../app-context.js";
import type { Principal } from "../../auth/principal.js";
import { sealSecret } from "../../config/secret-box.js";
import type { WebhooksTable } from "../../db/schema.js";
import { AppError } from "../../errors/app-error.js";
import { buildEnvelope } from "../../events/build-envelope.js";
import { eventData, WEBHOOK_TEST } from "../../events/event-catalogue.js";
import { decodeCursor, toPage, type Page } from "../../http/pagination.js";
import {
  deleteWebhook,
  findWebhook,
  insertWebhook,
  listWebhooks,
  updateWebhook,
} from "./endpoints-repository.js";
import { validateEndpointInput, type EndpointInput } from "./validate-endpoint-input.js";
import { toWebhookView, type WebhookView } from "./webhook-views.js";

export interface CreateEndpointInput {
  name: string;
  url: string;
  secret: string;
  events: string[];
  enabled?: boolean | undefined;
}

export const TEST_EVENT_MESSAGE = "Test delivery from Parley";

function urlPolicy(ctx: AppContext) {
  return {
    allowHttp: ctx.config.webhookAllowHttp,
    allowPrivateNetworks: ctx.config.webhookAllowPrivateNetworks,
  };
}

export async function createEndpoint(
  ctx: AppContext,
  input: CreateEndpointInput,
): Promise<WebhookView> {
  const valid = validateEndpointInput(input, urlPolicy(ctx));
  const now = ctx.now();
  const row = await insertWebhook(ctx.db, {
    name: valid.name!,
    url: valid.url!,
    secret_ciphertext: sealSecret(ctx.keys.secretKey, valid.secret!),
    events: JSON.stringify(valid.events!),
    enabled: valid.enabled === false ? 0 : 1,
    created_at: now,
    updated_at: now,
  });
  return toWebhookView(row);
}

export async function listEndpoints(
  ctx: AppContext,
  query: { limit: number; cursor?: string | undefined },
): Promise<Page<WebhookView>> {
  const rows = await listWebhooks(ctx.db, {
    afterId: decodeCursor(query.cursor),
    limit: query.limit,
  });
  return toPage(rows, query.limit, toWebhookView);
}

export async function getEndpoint(ctx: AppContext, id: number): Promise<WebhookView> {
  const row = await findWebhook(ctx.db, id);
  if (!row) throw new AppError("not_found", `no webhook ${id}`);
  return toWebhookView(row);
}

/**
 * Changes the given fields only; an empty change leaves the endpoint (and `updatedAt`) as it was.
 * Disabling does not touch deliveries already queued: they stay PENDING or FAILED and the
 * dispatcher holds them back until the endpoint is enabled again (docs/webhooks.md, "Managing
 * endpoints (admin API)"). WEBHOOK_TEST deliveries are the exception: they are sent regardless.
 */
export async function updateEndpoint(
  ctx: AppContext,
  id: number,
  input: EndpointInput,
): Promise<WebhookView> {
  const valid = validateEndpointInput(input, urlPolicy(ctx));
  const changes: Updateable<WebhooksTable> = {};
  if (valid.name !== undefined) changes.name = valid.name;
  if (valid.url !== undefined) changes.url = valid.url;
  if (valid.secret !== undefined)
    changes.secret_ciphertext = sealSecret(ctx.keys.secretKey, valid.secret);
  if (valid.events !== undefined) changes.events = JSON.stringify(valid.events);
  if (valid.enabled !== undefined) changes.enabled = valid.enabled ? 1 : 0;
  if (Object.keys(changes).length === 0) return getEndpoint(ctx, id);

  const row = await updateWebhook(ctx.db, id, { ...changes, updated_at: ctx.now() });
  if (!row) throw new AppError("not_found", `no webhook ${id}`);
  // Deliveries held back while the endpoint was disabled are due now: wake the dispatchers (this
  // process's, and other processes' through NOTIFY) rather than leave them to the next sweep.
  if (valid.enabled === true) ctx.spine.announceDue();
  return toWebhookView(row);
}

/** Deletes the endpoint with its whole delivery log; queued deliveries are dropped. */
export async function deleteEndpoint(ctx: AppContext, id: number): Promise<void> {
  if (!(await deleteWebhook(ctx.db, id))) throw new AppError("not_found", `no webhook ${id}`);
}

/**
 * Queues one WEBHOOK_TEST delivery to this endpoint only. It is queued even when the endpoint is
 * disabled, and the dispatcher sends it anyway: checking a receiver before turning it on is the
 * point of the test event.
 */
export async function sendTestEvent(
  ctx: AppContext,
  actor: Principal,
  id: number,
): Promise<{ deliveryId: number; status: "PENDING" }> {
  const deliveryId = await ctx.db.transaction().execute(async (trx) => {
    if (!(await findWebhook(trx, id))) throw new AppError("not_found", `no webhook ${id}`);
    const data = eventData.webhookTest({
      message: TEST_EVENT_MESSAGE,
      requestedBy: actor.username,
    });
    const now = ctx.now();
    const body = buildEnvelope(WEBHOOK_TEST, now, id, data);
    return ctx.spine.enqueueOne(trx, id, WEBHOOK_TEST, body, now);
  });
  ctx.spine.afterCommit([], 1);
  return { deliveryId, status: "PENDING" };
}
