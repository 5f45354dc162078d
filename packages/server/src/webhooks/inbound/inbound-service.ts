import { inboundWebhookAddresses } from "@parley/client/browser";
import type { InboundWebhook, InboundWebhookWithToken } from "@parley/client/wire";
import type { AppContext } from "../../app-context.js";
import type { Config } from "../../config/load-config.js";
import { sealSecret } from "../../config/secret-box.js";
import { keysetSlice, type KeysetSlice } from "../../db/keyset-slice.js";
import { AppError } from "../../errors/app-error.js";
import { isoTime } from "../../events/event-catalogue.js";
import {
  deleteInboundWebhookRow,
  findInboundWebhookRow,
  insertInboundWebhook,
  listInboundWebhookRows,
  replaceInboundWebhookToken,
  roomIsOpen,
  updateInboundWebhookRow,
  type InboundWebhookChanges,
  type InboundWebhookRow,
} from "./inbound-repository.js";
import { forgetIngestTargets } from "./ingest.js";
import { createIngestToken } from "./ingest-token.js";

/** An inbound webhook as the admin API shows it (the wire's InboundWebhook): the token only by its last 8 characters. */
export type InboundWebhookView = InboundWebhook;

/** The create and rotate answers: the only time the token and the full URLs are shown. */
export type { InboundWebhookWithToken };

export interface CreateInboundWebhookInput {
  roomId: number;
  displayName: string;
  avatarUrl?: string | null | undefined;
  enabled?: boolean | undefined;
  allowOverrides?: boolean | undefined;
  signingSecret?: string | null | undefined;
}

export interface UpdateInboundWebhookInput {
  displayName?: string | undefined;
  avatarUrl?: string | null | undefined;
  enabled?: boolean | undefined;
  allowOverrides?: boolean | undefined;
  /** A new signing secret; null removes it. */
  signingSecret?: string | null | undefined;
}

export function toInboundWebhookView(row: InboundWebhookRow): InboundWebhookView {
  return {
    id: row.id,
    roomId: row.room_id,
    displayName: row.display_name,
    avatarUrl: row.avatar_url,
    enabled: row.enabled === 1,
    allowOverrides: row.allow_overrides === 1,
    tokenLast8: row.token_last8,
    signingSecretSet: row.signing_secret_ciphertext !== null,
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
  };
}

/** Where the API is reached from outside: PARLEY_PUBLIC_BASE_URL, else `http://<host>:<port>`. */
function publicBaseUrl(config: Pick<Config, "publicBaseUrl" | "host" | "port">): string {
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  return config.publicBaseUrl ?? `http://${host}:${config.port}`;
}

/** The webhook with its token and every address it answers on (create and rotate only). */
function withToken(
  ctx: AppContext,
  row: InboundWebhookRow,
  token: string,
): InboundWebhookWithToken {
  const addresses = inboundWebhookAddresses(publicBaseUrl(ctx.config), { id: row.id, token });
  return { ...toInboundWebhookView(row), token, ...addresses };
}

/** An avatar is shown by browsers: only absolute http(s) URLs, never javascript:, data: or paths. */
function checkAvatarUrl(avatarUrl: string | null | undefined): void {
  if (avatarUrl === null || avatarUrl === undefined) return;
  let parsed: URL | undefined;
  try {
    parsed = new URL(avatarUrl);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    throw new AppError(
      "invalid_url",
      "avatarUrl must be an absolute http:// or https:// URL, or null",
      {
        field: "body.avatarUrl",
      },
    );
  }
}

/** 16..1024 characters, as for outbound secrets (GitHub and Stripe secrets fit). */
function checkSigningSecret(secret: string | null | undefined): void {
  if (secret === null || secret === undefined) return;
  if (secret.length < 16 || secret.length > 1024) {
    throw new AppError("invalid_secret", "signingSecret must be 16 to 1024 characters", {
      field: "body.signingSecret",
    });
  }
}

/** The secret sealed for storage with the server's secret key (as the outbound secrets are). */
function sealedSigningSecret(ctx: AppContext, secret: string | null | undefined): string | null {
  return secret === null || secret === undefined ? null : sealSecret(ctx.keys.secretKey, secret);
}

async function existingRow(ctx: AppContext, id: number): Promise<InboundWebhookRow> {
  const row = await findInboundWebhookRow(ctx.db, id);
  if (!row) throw new AppError("not_found", `no inbound webhook ${id}`);
  return row;
}

export async function createInboundWebhook(
  ctx: AppContext,
  actorUserId: number,
  input: CreateInboundWebhookInput,
): Promise<InboundWebhookWithToken> {
  checkAvatarUrl(input.avatarUrl);
  checkSigningSecret(input.signingSecret);
  // The room is named in the body, not the path: a missing room is a bad request, not a 404.
  if (!(await roomIsOpen(ctx.db, input.roomId))) {
    throw new AppError(
      "validation_failed",
      `roomId ${input.roomId} does not name an existing room (a direct message takes no integrations)`,
      {
        field: "body.roomId",
      },
    );
  }
  const token = createIngestToken();
  const row = await insertInboundWebhook(ctx.db, {
    roomId: input.roomId,
    displayName: input.displayName,
    avatarUrl: input.avatarUrl ?? null,
    enabled: input.enabled ?? true,
    allowOverrides: input.allowOverrides ?? false,
    signingSecretCiphertext: sealedSigningSecret(ctx, input.signingSecret),
    tokenHash: token.hash,
    tokenLast8: token.last8,
    createdBy: actorUserId,
    now: ctx.now(),
  });
  return withToken(ctx, row, token.token);
}

export async function listInboundWebhooks(
  ctx: AppContext,
  query: { afterId?: number | undefined; limit: number; roomId?: number | undefined },
): Promise<KeysetSlice<InboundWebhookView>> {
  const rows = await listInboundWebhookRows(ctx.db, {
    after: query.afterId,
    limit: query.limit,
    roomId: query.roomId,
  });
  return keysetSlice(rows, query.limit, toInboundWebhookView);
}

export async function getInboundWebhook(ctx: AppContext, id: number): Promise<InboundWebhookView> {
  return toInboundWebhookView(await existingRow(ctx, id));
}

export async function updateInboundWebhook(
  ctx: AppContext,
  id: number,
  input: UpdateInboundWebhookInput,
): Promise<InboundWebhookView> {
  checkAvatarUrl(input.avatarUrl);
  checkSigningSecret(input.signingSecret);
  const changes: InboundWebhookChanges = {};
  if (input.displayName !== undefined) changes.display_name = input.displayName;
  if (input.avatarUrl !== undefined) changes.avatar_url = input.avatarUrl;
  if (input.enabled !== undefined) changes.enabled = input.enabled ? 1 : 0;
  if (input.allowOverrides !== undefined) changes.allow_overrides = input.allowOverrides ? 1 : 0;
  if (input.signingSecret !== undefined)
    changes.signing_secret_ciphertext = sealedSigningSecret(ctx, input.signingSecret);
  if (Object.keys(changes).length === 0) return getInboundWebhook(ctx, id);
  const row = await updateInboundWebhookRow(ctx.db, id, changes, ctx.now());
  forgetIngestTargets(ctx);
  if (!row) throw new AppError("not_found", `no inbound webhook ${id}`);
  return toInboundWebhookView(row);
}

export async function deleteInboundWebhook(ctx: AppContext, id: number): Promise<void> {
  const deleted = await deleteInboundWebhookRow(ctx.db, id);
  forgetIngestTargets(ctx);
  if (!deleted) throw new AppError("not_found", `no inbound webhook ${id}`);
}

/** A new token in place of the old one, in one update: the old token answers 404 from then on. */
export async function rotateInboundWebhookToken(
  ctx: AppContext,
  id: number,
): Promise<InboundWebhookWithToken> {
  const token = createIngestToken();
  const row = await replaceInboundWebhookToken(ctx.db, id, token, ctx.now());
  forgetIngestTargets(ctx);
  if (!row) throw new AppError("not_found", `no inbound webhook ${id}`);
  return withToken(ctx, row, token.token);
}
