import crypto from "node:crypto";
import type { AppContext } from "../../../app-context.js";
import type { PostClaim, PostedMessage } from "../../../chat/post-message.js";
import { AppError, isAppError } from "../../../errors/app-error.js";
import {
  findIdempotencyRow,
  IDEMPOTENCY_CLAIM_COLUMNS,
  IDEMPOTENCY_CLAIM_TYPES,
  idempotencyClaimBatchCtes,
  idempotencyClaimCte,
  idempotencyClaimValues,
  keepIdempotencyClaim,
  type IdempotencyRow,
  type KeptClaim,
} from "./idempotency-repository.js";

/** How long a key is kept: another request with it within this time is a replay (DESIGN s. 6). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * How long a request may stay in flight with its key before another request with the key may run
 * in its place: the first is stuck (a live request ends long before, bounded by the database
 * time-out). Until then its duplicates in this process answer 409 idempotency_key_in_use. Also
 * how long a claim row written without its answer (by releases before the claim and the post
 * became one unit of work) holds its key.
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
  /** True when `answer` is the first request's, replayed: nothing of this request was written. */
  replayed: boolean;
}

/**
 * What the work of a keyed request gets: the claim its post must win (postMessage's `claim`),
 * written with the answer the post gives, in the post's own unit of work.
 */
export interface IdempotencyClaim {
  /** The claim for the post whose answer is `answer(posted)`. */
  post(answer: (posted: PostedMessage) => KeptAnswer): PostClaim;
}

const sha256 = (data: string | Uint8Array) => crypto.hash("sha256", data, "hex");

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

/** Thrown by a post whose claim another request holds: it wrote nothing. */
class ClaimLost extends Error {
  constructor() {
    super("another request holds this idempotency key");
  }
}

const is2xx = (status: number) => status >= 200 && status < 300;

/**
 * The answer's body as its text around the message id, which only the post's statement knows:
 * the answer rendered for two ids that share no first and no last digit, and what the two have
 * in common before and after. Undefined when the id is not there once (the post then takes its
 * transaction, where the id is known).
 */
const HOLE_IDS = [9_007_199_254_740_991, 8_888_888_888_888_888] as const;
function bodyAroundId(
  answer: (posted: PostedMessage) => KeptAnswer,
  posted: PostedMessage,
): { prefix: string; suffix: string } | null | undefined {
  const a = answer({ ...posted, id: HOLE_IDS[0] }).body;
  const b = answer({ ...posted, id: HOLE_IDS[1] }).body;
  if (a === null || b === null) return a === b ? null : undefined;
  let start = 0;
  while (start < a.length && a[start] === b[start]) start++;
  let end = 0;
  while (end < a.length - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end++;
  const prefix = a.slice(0, start);
  const suffix = a.slice(a.length - end);
  return a === `${prefix}${HOLE_IDS[0]}${suffix}` && b === `${prefix}${HOLE_IDS[1]}${suffix}`
    ? { prefix, suffix }
    : undefined;
}

/** The claim as written with `answer`. */
function keptClaim(
  claim: Omit<KeptClaim, "status" | "headers" | "body">,
  answer: KeptAnswer,
): KeptClaim {
  return {
    ...claim,
    status: answer.status,
    headers: JSON.stringify(answer.headers),
    body: answer.body,
  };
}

// The claim's texts in a post's statement: fixed, so built once (the statement's text is looked up
// by its text for its prepared statement's name).
const CLAIM_CTES = new Map<number, string>();
const claimCte = (first: number): string => {
  let cte = CLAIM_CTES.get(first);
  if (cte === undefined)
    CLAIM_CTES.set(first, (cte = idempotencyClaimCte(first, IDEMPOTENCY_ABANDONED_AFTER_MS)));
  return cte;
};
const CLAIM_COMBINED = {
  columns: IDEMPOTENCY_CLAIM_COLUMNS,
  types: IDEMPOTENCY_CLAIM_TYPES,
  ctes: idempotencyClaimBatchCtes(IDEMPOTENCY_ABANDONED_AFTER_MS),
};

/** The claim a post of this request writes (see IdempotencyClaim). */
function claimForPost(
  claim: Omit<KeptClaim, "status" | "headers" | "body">,
  answer: (posted: PostedMessage) => KeptAnswer,
  used: () => void,
): PostClaim {
  used();
  return {
    keep: (db, posted) =>
      keepIdempotencyClaim(db, keptClaim(claim, answer(posted)), IDEMPOTENCY_ABANDONED_AFTER_MS),
    statement(posted) {
      const body = bodyAroundId(answer, posted);
      if (body === undefined) return undefined;
      const template = answer(posted);
      return {
        cte: claimCte,
        values: idempotencyClaimValues(keptClaim(claim, template), body),
        combined: CLAIM_COMBINED,
      };
    },
    lost: () => new ClaimLost(),
  };
}

function replay(row: IdempotencyRow & { status: number }): IdempotentResult {
  return {
    answer: {
      status: row.status,
      headers: row.answer_headers ? (JSON.parse(row.answer_headers) as Record<string, string>) : {},
      body: row.answer_body,
    },
    replayed: true,
  };
}

/**
 * What the key's row says to a request that did not win it: the first answer (a replay), 422 for
 * other body bytes, 409 while an older release's claim is in flight; undefined when the key may
 * be claimed (no row, or one that may be taken over).
 */
function answerOfRow(
  row: IdempotencyRow | undefined,
  claim: Omit<KeptClaim, "status" | "headers" | "body">,
): IdempotentResult | undefined {
  if (!row || row.expires_at <= claim.now) return undefined;
  if (row.body_hash !== claim.bodyHash) throw keyReused();
  if (row.status !== null) return replay({ ...row, status: row.status });
  if (row.claimed_at >= claim.now - IDEMPOTENCY_ABANDONED_AFTER_MS) throw keyInUse();
  return undefined;
}

/** The requests in flight in this process, by webhook and key hash (per database). */
interface InFlight {
  since: number;
  bodyHash: string;
}
const inFlightByDatabase = new WeakMap<AppContext["db"], Map<string, InFlight>>();

/**
 * Runs `work` so that what it writes is written at most once per (inbound webhook, kind, key)
 * within IDEMPOTENCY_TTL_MS, across restarts and processes; answers the first answer to every
 * later request with the key.
 *
 * The claim is one row (idempotency-repository.ts), written with the answer it keeps in the unit of
 * work of what it answers: the post made with `claim.post(answer)` (one transaction; on
 * PostgreSQL one statement, group-committed with the posts that arrive with it), or, for work
 * that posts nothing (a ping answered 204), the kept answer alone. So only what committed is
 * kept: a request refused, or whose process dies, leaves nothing, and a retry runs afresh.
 *
 * - The first request's work runs and its answer is kept if it is 2xx; any other answer, or a
 *   throw, writes no claim, so the sender may retry with the key.
 * - A later request with the key and the same body answers the kept answer (`replayed: true`)
 *   and writes nothing; with another body, 422 idempotency_key_reused. Its work runs first (a
 *   replay's checks run again, and its post, which loses the claim, writes nothing): a key is
 *   looked up only when it is lost, so the first request pays no extra round trip.
 * - While a request with the key is in flight in this process, another answers 409
 *   idempotency_key_in_use at once. A duplicate in another process runs its work; its claim then
 *   waits for the first's unit of work to end, and answers the first answer once it committed.
 *   Either way, one request posts. (AppErrors are thrown, for the caller to answer in its shape.)
 */
export async function runIdempotent(
  ctx: Pick<AppContext, "db" | "now">,
  request: IdempotentRequest,
  work: (claim: IdempotencyClaim) => Promise<KeptAnswer>,
): Promise<IdempotentResult> {
  const keyHash = idempotencyKeyHash(request.kind, request.key);
  const now = ctx.now();
  const claim = {
    inboundWebhookId: request.inboundWebhookId,
    keyHash,
    bodyHash: request.body === null ? keyHash : sha256(request.body),
    now,
    expiresAt: now + IDEMPOTENCY_TTL_MS,
  };

  let inFlight = inFlightByDatabase.get(ctx.db);
  if (!inFlight) inFlightByDatabase.set(ctx.db, (inFlight = new Map()));
  const flightKey = `${request.inboundWebhookId}/${keyHash}`;
  const other = inFlight.get(flightKey);
  if (other && other.since >= now - IDEMPOTENCY_ABANDONED_AFTER_MS) {
    if (other.bodyHash !== claim.bodyHash) throw keyReused();
    throw keyInUse();
  }
  const mine: InFlight = { since: now, bodyHash: claim.bodyHash };
  inFlight.set(flightKey, mine);
  try {
    // A few rounds at most: each lost claim whose row is gone means the request that held it
    // rolled back meanwhile; the next round claims again.
    for (let round = 0; round < 5; round++) {
      let posted = false;
      let answer: KeptAnswer;
      try {
        answer = await work({
          post: (answerOf) => claimForPost(claim, answerOf, () => (posted = true)),
        });
      } catch (error) {
        if (!(error instanceof ClaimLost)) {
          // Refused. A retry of a request that was answered already gets that answer even when
          // it would be refused now (its content rules changed, say); else the refusal.
          if (isAppError(error) && error.code !== "not_found") {
            const row = await findIdempotencyRow(ctx.db, request.inboundWebhookId, keyHash);
            const kept = answerOfRow(row, claim);
            if (kept) return kept;
          }
          throw error;
        }
        const row = await findIdempotencyRow(ctx.db, request.inboundWebhookId, keyHash);
        const kept = answerOfRow(row, claim);
        if (kept) return kept;
        continue;
      }
      if (!is2xx(answer.status) || posted) return { answer, replayed: false };
      // Nothing posted (a ping): the answer alone is kept, by one statement.
      const won = await keepIdempotencyClaim(
        ctx.db,
        keptClaim(claim, answer),
        IDEMPOTENCY_ABANDONED_AFTER_MS,
      );
      if (won) return { answer, replayed: false };
      const kept = answerOfRow(
        await findIdempotencyRow(ctx.db, request.inboundWebhookId, keyHash),
        claim,
      );
      if (kept) return kept;
    }
    throw keyInUse();
  } finally {
    if (inFlight.get(flightKey) === mine) inFlight.delete(flightKey);
  }
}
