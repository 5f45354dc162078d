import { randomBytes } from "node:crypto";
import type { EndpointAuthParams, EndpointTlsParams } from "@parley/client/wire";
import type { Kysely, Updateable } from "kysely";
import type { AppContext } from "../../../app-context.js";
import type { Principal } from "../../../auth/principal.js";
import { openSecret, sealSecret } from "../../../config/secret-box.js";
import type {
  Database,
  Ordering,
  PayloadFormat,
  SignatureScheme,
  WebhooksTable,
} from "../../../db/schema.js";
import { AppError } from "../../../errors/app-error.js";
import { buildEnvelope } from "../../../events/build-envelope.js";
import {
  eventData,
  EVENT_TYPES,
  WEBHOOK_TEST,
  WEBHOOK_VERIFICATION,
  type DeliverableEvent,
} from "../../../events/event-catalogue.js";
import type { Tx } from "../../../db/unit-of-work.js";
import { keysetSlice, type KeysetSlice } from "../../../db/keyset-slice.js";
import { readSnapshot } from "../../../db/read-snapshot.js";
import { eventPrefixesOf, roomFilterOf } from "../../../events/event-subscriptions.js";
import { generateSigningKeyPair } from "../generate-signing-key-pair.js";
import {
  attemptStatsSince,
  deleteWebhook,
  findHeldLanes,
  findSealedSigningKeys,
  findVerificationChallenge,
  findWebhook,
  insertWebhook,
  listWebhooks,
  relaneQueuedDeliveries,
  updateWebhook,
} from "./endpoints-repository.js";
import { validateAuth, type StoredAuth } from "../endpoint-auth.js";
import { validateTls } from "../endpoint-tls.js";
import {
  validateEndpointInput,
  validateSecret,
  type EndpointInput,
} from "./validate-endpoint-input.js";
import {
  toWebhookView,
  type HeldLane,
  type WebhookRow,
  type WebhookView,
} from "./webhook-views.js";

export interface CreateEndpointInput {
  name: string;
  url: string;
  /** Required but for the standard-webhooks-ed25519 scheme (then a generated one is kept). */
  secret?: string | undefined;
  events: string[];
  enabled?: boolean | undefined;
  signatureScheme?: SignatureScheme | undefined;
  payloadFormat?: PayloadFormat | undefined;
  traceContext?: boolean | undefined;
  roomIds?: number[] | null | undefined;
  headers?: Record<string, string> | null | undefined;
  maxDeliveriesPerSecond?: number | null | undefined;
  ordering?: Ordering | undefined;
  auth?: EndpointAuthParams | null | undefined;
  tls?: EndpointTlsParams | null | undefined;
}

const DAY_MS = 86_400_000;

/** The views of `rows`, each with its masked headers and its health over the last 24 hours. */
async function viewsOf(
  ctx: AppContext,
  db: Kysely<Database>,
  rows: WebhookRow[],
): Promise<WebhookView[]> {
  const stats = await attemptStatsSince(
    db,
    rows.map((row) => row.id),
    ctx.now() - DAY_MS,
  );
  // Only an ordered endpoint has lanes (one look-up each, a seek per lane).
  const held = new Map<number, HeldLane[]>();
  for (const row of rows)
    if (row.ordering !== "none") held.set(row.id, await findHeldLanes(db, row.id));
  return rows.map((row) =>
    toWebhookView(row, {
      heldLanes: held.get(row.id) ?? [],
      headers:
        row.headers_ciphertext === null
          ? null
          : (JSON.parse(openSecret(ctx.keys.secretKey, row.headers_ciphertext)) as Record<
              string,
              string
            >),
      stats: stats.get(row.id),
      auth: openAuth(ctx, row.auth_ciphertext),
      autoDisable: {
        minFailures: ctx.config.webhookAutoDisableMinFailures,
        afterMs: ctx.config.webhookAutoDisableAfterMs,
      },
    }),
  );
}

function openAuth(ctx: AppContext, ciphertext: string | null): StoredAuth | null {
  return ciphertext === null
    ? null
    : (JSON.parse(openSecret(ctx.keys.secretKey, ciphertext)) as StoredAuth);
}

function openHeaders(ctx: AppContext, ciphertext: string | null): Record<string, string> | null {
  return ciphertext === null
    ? null
    : (JSON.parse(openSecret(ctx.keys.secretKey, ciphertext)) as Record<string, string>);
}

/**
 * With `auth` set, Parley writes the Authorization header itself: a custom header of that name
 * is refused (400 header_reserved), whichever of the two was set first.
 */
function refuseAuthorizationHeader(
  auth: StoredAuth | null,
  headers: Record<string, string> | null,
): void {
  if (auth === null || headers === null) return;
  const name = Object.keys(headers).find((header) => header.toLowerCase() === "authorization");
  if (name !== undefined)
    throw new AppError(
      "header_reserved",
      `"${name}" is set by Parley from auth; remove the header or set auth to null`,
      { field: "body.headers", header: name },
    );
}

/** The columns of a `tls` setting: sealed settings and the certificate's subject and expiry. */
function tlsColumns(ctx: AppContext, input: EndpointTlsParams | null) {
  if (input === null)
    return { tls_ciphertext: null, tls_subject: null, tls_expires_at: null } as const;
  const { stored, summary } = validateTls(input);
  return {
    tls_ciphertext: sealSecret(ctx.keys.secretKey, JSON.stringify(stored)),
    tls_subject: summary.subject,
    tls_expires_at: summary.expiresAt,
  };
}

async function viewOf(ctx: AppContext, db: Kysely<Database>, row: WebhookRow) {
  return (await viewsOf(ctx, db, [row]))[0]!;
}

const ED25519 = "standard-webhooks-ed25519";

/** A new ed25519 key pair as stored: the private key sealed like the secret. */
function sealedKeyPair(ctx: AppContext): { signing_key_ciphertext: string; public_key: string } {
  const pair = generateSigningKeyPair();
  return {
    signing_key_ciphertext: sealSecret(ctx.keys.secretKey, pair.privateKey),
    public_key: pair.publicKey,
  };
}

function sealedHeaders(ctx: AppContext, headers: Record<string, string> | null): string | null {
  return headers === null || Object.keys(headers).length === 0
    ? null
    : sealSecret(ctx.keys.secretKey, JSON.stringify(headers));
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
  const auth = validateAuth(input.auth ?? null, null, urlPolicy(ctx));
  refuseAuthorizationHeader(auth, valid.headers ?? null);
  const tls = tlsColumns(ctx, input.tls ?? null);
  const ed25519 = valid.signatureScheme === ED25519;
  if (valid.secret === undefined && !ed25519)
    throw new AppError(
      "validation_failed",
      `secret is required (16 to 1024 characters), unless signatureScheme is ${ED25519}`,
      { field: "body.secret" },
    );
  const now = ctx.now();
  const challenge = ctx.config.webhookVerifyOwnership ? generateChallenge() : null;
  const row = await ctx.database.transaction(async (tx) => {
    const inserted = await insertWebhook(tx.db, {
      name: valid.name!,
      url: valid.url!,
      // An ed25519 endpoint signs with its key pair; the secret is kept for a later change of scheme.
      secret_ciphertext: sealSecret(ctx.keys.secretKey, valid.secret ?? generateSecret()),
      ...(ed25519 ? sealedKeyPair(ctx) : {}),
      events: JSON.stringify(valid.events!),
      enabled: valid.enabled === false ? 0 : 1,
      created_at: now,
      updated_at: now,
      signature_scheme: valid.signatureScheme ?? "parley",
      payload_format: valid.payloadFormat ?? "parley",
      trace_context: valid.traceContext ? 1 : 0,
      event_prefixes: eventPrefixesOf(valid.events!),
      room_filter: roomFilterOf(valid.roomIds ?? null),
      headers_ciphertext: sealedHeaders(ctx, valid.headers ?? null),
      max_per_second: valid.maxDeliveriesPerSecond ?? null,
      ordering: valid.ordering ?? "none",
      disabled_reason: valid.enabled === false ? "manual" : null,
      disabled_at: valid.enabled === false ? now : null,
      auth_ciphertext: auth === null ? null : sealSecret(ctx.keys.secretKey, JSON.stringify(auth)),
      ...tls,
      verification: challenge === null ? "not_required" : "pending",
      verification_challenge: challenge,
    });
    // The ownership check: nothing goes to it until its receiver answers this challenge.
    if (challenge !== null) await queueChallenge(tx, inserted.id, challenge, now);
    return inserted;
  });
  if (valid.traceContext) ctx.traceGate.endpointTraced();
  return viewOf(ctx, ctx.db, row);
}

/** A new ownership challenge: 32 URL-safe characters (24 random bytes). */
function generateChallenge(): string {
  return randomBytes(24).toString("base64url");
}

/** Queues a WEBHOOK_VERIFICATION delivery of `challenge` to the endpoint, outside its lanes. */
function queueChallenge(tx: Tx, webhookId: number, challenge: string, now: number) {
  const body = buildEnvelope(
    WEBHOOK_VERIFICATION,
    now,
    webhookId,
    eventData.webhookVerification({ challenge }),
  );
  return tx.enqueue({
    webhookId,
    event: WEBHOOK_VERIFICATION,
    body,
    enqueuedAt: now,
    outsideLanes: true,
  });
}

export async function listEndpoints(
  ctx: AppContext,
  page: { afterId?: number | undefined; limit: number },
): Promise<KeysetSlice<WebhookView>> {
  return readSnapshot(ctx.db, async (db) => {
    const rows = await listWebhooks(db, { afterId: page.afterId, limit: page.limit });
    const slice = keysetSlice(rows, page.limit, (row) => row);
    return { items: await viewsOf(ctx, db, slice.items), hasMore: slice.hasMore };
  });
}

export async function getEndpoint(ctx: AppContext, id: number): Promise<WebhookView> {
  // The row and its attempt counts from one snapshot: a recording that commits between the two
  // reads would otherwise show attempts whose outcome the health columns do not have yet.
  return readSnapshot(ctx.db, async (db) => {
    const row = await findWebhook(db, id);
    if (!row) throw new AppError("not_found", `no webhook ${id}`);
    return viewOf(ctx, db, row);
  });
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
  const now = ctx.now();
  if (valid.secret !== undefined) {
    // A replaced secret ends any rotation overlap: use rotate-secret to keep the old one a while.
    changes.secret_ciphertext = sealSecret(ctx.keys.secretKey, valid.secret);
    changes.previous_secret_ciphertext = null;
    changes.previous_secret_expires_at = null;
  }
  if (valid.events !== undefined) {
    changes.events = JSON.stringify(valid.events);
    changes.event_prefixes = eventPrefixesOf(valid.events);
  }
  if (valid.enabled !== undefined) {
    changes.enabled = valid.enabled ? 1 : 0;
    changes.disabled_reason = valid.enabled ? null : "manual";
    changes.disabled_at = valid.enabled ? null : now;
    changes.disabled_delivery_id = null;
    changes.disabled_attempt = null;
    // Enabled again: its run of failures starts over, or the rule would disable it at once.
    if (valid.enabled) {
      changes.consecutive_failures = 0;
      changes.failing_since = null;
    }
  }
  if (valid.signatureScheme !== undefined) changes.signature_scheme = valid.signatureScheme;
  if (valid.payloadFormat !== undefined) changes.payload_format = valid.payloadFormat;
  if (valid.traceContext !== undefined) changes.trace_context = valid.traceContext ? 1 : 0;
  if (valid.traceContext) ctx.traceGate.endpointTraced();
  if (valid.roomIds !== undefined) changes.room_filter = roomFilterOf(valid.roomIds);
  if (valid.headers !== undefined) changes.headers_ciphertext = sealedHeaders(ctx, valid.headers);
  if (valid.maxDeliveriesPerSecond !== undefined)
    changes.max_per_second = valid.maxDeliveriesPerSecond;
  if (valid.ordering !== undefined) changes.ordering = valid.ordering;
  if (input.auth !== undefined || valid.headers !== undefined) {
    // Both are checked against what is stored: a PATCH may set one and keep the other.
    const current = await findWebhook(ctx.db, id);
    if (!current) throw new AppError("not_found", `no webhook ${id}`);
    const stored = openAuth(ctx, current.auth_ciphertext);
    const auth =
      input.auth === undefined ? stored : validateAuth(input.auth, stored, urlPolicy(ctx));
    const headers =
      valid.headers === undefined ? openHeaders(ctx, current.headers_ciphertext) : valid.headers;
    refuseAuthorizationHeader(auth, headers);
    if (input.auth !== undefined)
      changes.auth_ciphertext =
        auth === null ? null : sealSecret(ctx.keys.secretKey, JSON.stringify(auth));
  }
  if (input.tls !== undefined) Object.assign(changes, tlsColumns(ctx, input.tls));
  if (Object.keys(changes).length === 0) return getEndpoint(ctx, id);

  const row = await ctx.database.transaction(async (tx) => {
    const before =
      valid.ordering === undefined && valid.url === undefined
        ? undefined
        : await findWebhook(tx.db, id);
    // A new url is checked again (ownership check on): a new challenge, and nothing else goes
    // to it until its receiver answers that one; a challenge of the old url no longer counts.
    const challenge =
      ctx.config.webhookVerifyOwnership &&
      before !== undefined &&
      valid.url !== undefined &&
      valid.url !== before.url
        ? generateChallenge()
        : null;
    if (challenge !== null) {
      changes.verification = "pending";
      changes.verification_challenge = challenge;
    }
    let updated = await updateWebhook(tx.db, id, { ...changes, updated_at: now });
    if (!updated) throw new AppError("not_found", `no webhook ${id}`);
    if (challenge !== null) await queueChallenge(tx, id, challenge, now);
    // First switch to ed25519: its key pair is made now (a later switch back keeps it).
    if (updated.signature_scheme === ED25519 && updated.public_key === null)
      updated = (await updateWebhook(tx.db, id, sealedKeyPair(ctx)))!;
    if (before !== undefined && before.ordering !== updated.ordering) {
      // The queued deliveries move to the lanes of the new ordering (or out of lanes), in id
      // order as ever; those without a lane any more are due as they are: wake the dispatchers.
      await relaneQueuedDeliveries(tx.db, id, updated.ordering);
      tx.deliveriesDue();
    }
    // Deliveries held back while the endpoint was disabled are due now: wake the dispatchers (this
    // process's, and other processes' through NOTIFY) rather than leave them to the next sweep.
    if (valid.enabled === true) tx.deliveriesDue();
    return updated;
  });
  return viewOf(ctx, ctx.db, row);
}

export const DEFAULT_OVERLAP_SECONDS = 86_400;

/** `whsec_` + base64 of 32 random bytes: Standard Webhooks' secret format. */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/**
 * Replaces the secret, keeping the old one for `overlapSeconds` (0 drops it at once): meanwhile a
 * Standard Webhooks signature header carries a signature under each, and the parley header signs
 * with the new one. A rotation during an overlap ends the older overlap: only the secret being
 * replaced is kept. The new secret is shown only in this answer.
 *
 * An endpoint of the standard-webhooks-ed25519 scheme gets a new key pair instead, the old
 * private key signing too for the overlap (`v1a,<new> v1a,<old>`); the answer is the new public
 * key. Its key pair is Parley's to make: a `secret` given for it is refused.
 */
export async function rotateSecret(
  ctx: AppContext,
  id: number,
  input: { secret?: string | undefined; overlapSeconds?: number | undefined },
): Promise<
  | { secret: string; previousSecretExpiresAt: string | null }
  | { publicKey: string; previousKeyExpiresAt: string | null }
> {
  const given = input.secret === undefined ? undefined : validateSecret(input.secret);
  const overlapMs = (input.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS) * 1000;
  const now = ctx.now();
  const expiresAt = overlapMs > 0 ? now + overlapMs : null;
  const expiry = expiresAt === null ? null : new Date(expiresAt).toISOString();
  return ctx.database.transaction(async (tx) => {
    const old = await findSealedSigningKeys(tx.db, id);
    if (old === undefined) throw new AppError("not_found", `no webhook ${id}`);
    if (old.signature_scheme === ED25519) {
      if (given !== undefined)
        throw new AppError(
          "key_pair_generated",
          `a ${ED25519} endpoint signs with a key pair Parley generates: leave out secret, and a new pair is made`,
          { field: "body.secret" },
        );
      const pair = sealedKeyPair(ctx);
      const keepOld = expiresAt !== null && old.signing_key_ciphertext !== null;
      await updateWebhook(tx.db, id, {
        ...pair,
        previous_signing_key_ciphertext: keepOld ? old.signing_key_ciphertext : null,
        previous_signing_key_expires_at: keepOld ? expiresAt : null,
        updated_at: now,
      });
      return { publicKey: pair.public_key, previousKeyExpiresAt: keepOld ? expiry : null };
    }
    const secret = given ?? generateSecret();
    await updateWebhook(tx.db, id, {
      secret_ciphertext: sealSecret(ctx.keys.secretKey, secret),
      previous_secret_ciphertext: expiresAt === null ? null : old.secret_ciphertext,
      previous_secret_expires_at: expiresAt,
      updated_at: now,
    });
    return { secret, previousSecretExpiresAt: expiry };
  });
}

/** Deletes the endpoint with its whole delivery log; queued deliveries are dropped. */
export async function deleteEndpoint(ctx: AppContext, id: number): Promise<void> {
  if (!(await deleteWebhook(ctx.db, id))) throw new AppError("not_found", `no webhook ${id}`);
}

/**
 * Sends the endpoint's ownership challenge again (POST .../verify): a new WEBHOOK_VERIFICATION
 * delivery of its current challenge (one is made for an endpoint that never had one, whose state
 * stays as it is until its receiver answers). Answers the delivery like the test event.
 */
export async function verifyEndpoint(
  ctx: AppContext,
  id: number,
): Promise<{ deliveryId: number; status: "PENDING"; held: false }> {
  const deliveryId = await ctx.database.transaction(async (tx) => {
    const found = await findVerificationChallenge(tx.db, id);
    if (found === undefined) throw new AppError("not_found", `no webhook ${id}`);
    let challenge = found.challenge;
    if (challenge === null) {
      challenge = generateChallenge();
      await updateWebhook(tx.db, id, { verification_challenge: challenge });
    }
    return queueChallenge(tx, id, challenge, ctx.now());
  });
  return { deliveryId, status: "PENDING", held: false };
}

/**
 * Queues one test delivery to this endpoint only, whatever its subscriptions: WEBHOOK_TEST by
 * default, or `event` with the catalogue's sample as its data (so a receiver's handling of any
 * event can be tried, as `stripe trigger` does). WEBHOOK_TEST is queued even when the endpoint is
 * disabled, and the dispatcher sends it anyway: checking a receiver before turning it on is the
 * point of the test event. A sample of another event is a delivery of that event like any other:
 * while the endpoint is disabled it is held (the answer says so), and sent when it is enabled.
 */
export async function sendTestEvent(
  ctx: AppContext,
  actor: Principal,
  id: number,
  event: DeliverableEvent = WEBHOOK_TEST,
): Promise<{ deliveryId: number; status: "PENDING"; held: boolean }> {
  const { deliveryId, enabled, pending } = await ctx.database.transaction(async (tx) => {
    const webhook = await findWebhook(tx.db, id);
    if (!webhook) throw new AppError("not_found", `no webhook ${id}`);
    const now = ctx.now();
    const body =
      event === WEBHOOK_TEST
        ? buildEnvelope(
            WEBHOOK_TEST,
            now,
            id,
            eventData.webhookTest({ message: TEST_EVENT_MESSAGE, requestedBy: actor.username }),
          )
        : buildEnvelope(event, now, id, EVENT_TYPES[event].sample as never);
    const queued = await tx.enqueue({ webhookId: id, event, body, enqueuedAt: now });
    return {
      deliveryId: queued,
      enabled: webhook.enabled === 1,
      pending: webhook.verification === "pending",
    };
  });
  // A pending ownership check holds every test, WEBHOOK_TEST included.
  return {
    deliveryId,
    status: "PENDING",
    held: pending || (!enabled && event !== WEBHOOK_TEST),
  };
}
