import crypto from "node:crypto";
import type { AppContext } from "../../../app-context.js";
import { AppError } from "../../../errors/app-error.js";
import {
  completeIdempotencyClaim,
  findIdempotencyRow,
  insertIdempotencyClaim,
  releaseIdempotencyClaim,
  takeOverIdempotencyClaim,
  type ClaimValues,
} from "./idempotency-repository.js";

/** How long a key is kept: another request with it within this time is a replay (DESIGN s. 6). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * How long a claim may stay in flight before another request with the key may take it over: the
 * process that claimed it died mid-request (a live request ends long before, bounded by the
 * database time-out). Until then its retries answer 409 idempotency_key_in_use.
 */
export const IDEMPOTENCY_ABANDONED_AFTER_MS = 2 * 60 * 1000;

/**
 * Where a key comes from. Each kind is its own namespace, so a sender's delivery id never meets an
 * Idempotency-Key of the same text.
 * - `key`: the Idempotency-Key header; the same key with other body bytes is refused.
 * - `github-delivery`, `stripe-event`: the sender's own id for the event (X-GitHub-Delivery, the
 *   event's `id`): a repeat answers the first answer whatever its bytes (the sender re-signs it).
 */
export type IdempotencyKind = "key" | "github-delivery" | "stripe-event" | (string & {});

export interface IdempotentRequest {
  inboundWebhookId: number;
  kind: IdempotencyKind;
  key: string;
  /** The raw body bytes, compared between requests with the key; null: not compared. */
  body: Uint8Array | null;
}

/** An answer as it is kept and replayed: status, headers worth replaying, body text. */
export interface KeptAnswer {
  status: number;
  headers: Record<string, string>;
  body: string | null;
}

export interface IdempotentResult {
  answer: KeptAnswer;
  /** True when `answer` is the first request's, replayed: the work did not run. */
  replayed: boolean;
}

const sha256 = (data: string | Uint8Array) =>
  crypto.createHash("sha256").update(data).digest("hex");

export function idempotencyKeyHash(kind: IdempotencyKind, key: string): string {
  return sha256(`${kind}\u0000${key}`);
}

function keyInUse(): AppError {
  return new AppError(
    "idempotency_key_in_use",
    "a request with this Idempotency-Key is still being processed; retry after it ends",
    {},
    { "retry-after": "1" },
  );
}

function keyReused(): AppError {
  return new AppError(
    "idempotency_key_reused",
    "this Idempotency-Key was first used with another body: use a new key for a new request",
  );
}

function replay(row: {
  status: number;
  answer_headers: string | null;
  answer_body: string | null;
}) {
  return {
    status: row.status,
    headers: row.answer_headers ? (JSON.parse(row.answer_headers) as Record<string, string>) : {},
    body: row.answer_body,
  };
}

/** Claims the key, or answers what a request that cannot run gets (a replay, 409 or 422). */
async function claim(
  ctx: Pick<AppContext, "db">,
  values: ClaimValues,
): Promise<KeptAnswer | "claimed"> {
  const { db } = ctx;
  const abandonedBefore = values.now - IDEMPOTENCY_ABANDONED_AFTER_MS;
  // A few rounds at most: each lost race means another request changed the row meanwhile (freed
  // it, or took it over); the next read sees what it did.
  for (let round = 0; round < 5; round++) {
    if (await insertIdempotencyClaim(db, values)) return "claimed";
    const row = await findIdempotencyRow(db, values.inboundWebhookId, values.keyHash);
    if (!row) continue; // freed (the first request was refused) since the insert
    const expired = row.expires_at <= values.now;
    if (!expired) {
      if (row.body_hash !== values.bodyHash) throw keyReused();
      if (row.status !== null) return replay({ ...row, status: row.status });
      if (row.claimed_at >= abandonedBefore) throw keyInUse();
    }
    if (await takeOverIdempotencyClaim(db, { ...values, abandonedBefore })) return "claimed";
  }
  throw keyInUse();
}

/**
 * Runs `work` at most once per (inbound webhook, kind, key) within IDEMPOTENCY_TTL_MS, across
 * restarts and processes (the claim is a database row: see idempotency-repository.ts).
 *
 * - The first request claims the key, runs `work`, and keeps its answer if it is 2xx; any other
 *   answer, or a throw, frees the key, so the sender may retry with it.
 * - A later request with the key and the same body answers the kept answer (`replayed: true`)
 *   without running `work`; with another body, 422 idempotency_key_reused; while the first is in
 *   flight, 409 idempotency_key_in_use (thrown as AppError, for the caller to answer in its shape).
 *
 * Exactly once holds for concurrent and repeated requests; a process that dies between the post
 * and keeping its answer leaves a claim that a retry takes over after
 * IDEMPOTENCY_ABANDONED_AFTER_MS (and posts again).
 */
export async function runIdempotent(
  ctx: Pick<AppContext, "db" | "now">,
  request: IdempotentRequest,
  work: () => Promise<KeptAnswer>,
): Promise<IdempotentResult> {
  const keyHash = idempotencyKeyHash(request.kind, request.key);
  const now = ctx.now();
  const values: ClaimValues = {
    inboundWebhookId: request.inboundWebhookId,
    keyHash,
    bodyHash: request.body === null ? keyHash : sha256(request.body),
    now,
    expiresAt: now + IDEMPOTENCY_TTL_MS,
  };
  const claimed = await claim(ctx, values);
  if (claimed !== "claimed") return { answer: claimed, replayed: true };

  const mine = { inboundWebhookId: request.inboundWebhookId, keyHash, claimedAt: now };
  let answer: KeptAnswer;
  try {
    answer = await work();
  } catch (error) {
    await releaseIdempotencyClaim(ctx.db, mine).catch(() => undefined);
    throw error;
  }
  if (answer.status >= 200 && answer.status < 300) {
    // The work is done (the message posted): a failure to keep its answer must not turn it into
    // an error the sender would retry. The claim then stays in flight until it is abandoned.
    await completeIdempotencyClaim(ctx.db, mine, {
      status: answer.status,
      headers: JSON.stringify(answer.headers),
      body: answer.body,
    }).catch(() => undefined);
  } else {
    await releaseIdempotencyClaim(ctx.db, mine);
  }
  return { answer, replayed: false };
}
