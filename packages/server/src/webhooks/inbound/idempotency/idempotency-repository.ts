import type { Kysely, Selectable } from "kysely";
import type { Database, InboundIdempotencyKeysTable } from "../../../db/schema.js";

/**
 * The statements of the idempotency claim (see run-idempotent.ts for how they are used). Each is
 * one statement, so a claim is won or lost by the database alone, on any number of processes:
 * the primary key (inbound_webhook_id, key_hash) lets exactly one insert through; an update that
 * re-checks the row's state in its WHERE lets exactly one request take over an expired or
 * abandoned claim (PostgreSQL re-evaluates the WHERE on the row it waited for; SQLite has one
 * writer). No transaction is held across the post itself.
 */
export type IdempotencyRow = Selectable<InboundIdempotencyKeysTable>;

export interface ClaimValues {
  inboundWebhookId: number;
  keyHash: string;
  bodyHash: string;
  now: number;
  expiresAt: number;
}

/** Inserts the claim; true when this request won it (no row had the key). */
export async function insertIdempotencyClaim(
  db: Kysely<Database>,
  claim: ClaimValues,
): Promise<boolean> {
  const row = await db
    .insertInto("inbound_idempotency_keys")
    .values({
      inbound_webhook_id: claim.inboundWebhookId,
      key_hash: claim.keyHash,
      body_hash: claim.bodyHash,
      claimed_at: claim.now,
      expires_at: claim.expiresAt,
      status: null,
      answer_headers: null,
      answer_body: null,
    })
    .onConflict((oc) => oc.columns(["inbound_webhook_id", "key_hash"]).doNothing())
    .returning("key_hash")
    .executeTakeFirst();
  return row !== undefined;
}

export async function findIdempotencyRow(
  db: Kysely<Database>,
  inboundWebhookId: number,
  keyHash: string,
): Promise<IdempotencyRow | undefined> {
  return db
    .selectFrom("inbound_idempotency_keys")
    .selectAll()
    .where("inbound_webhook_id", "=", inboundWebhookId)
    .where("key_hash", "=", keyHash)
    .executeTakeFirst();
}

/**
 * Takes over the key when its row has expired, or is a claim still in flight since before
 * `abandonedBefore` (its process died mid-request): the row becomes this request's claim. True
 * when this request won it; two requests racing for the same row cannot both win.
 */
export async function takeOverIdempotencyClaim(
  db: Kysely<Database>,
  claim: ClaimValues & { abandonedBefore: number },
): Promise<boolean> {
  const row = await db
    .updateTable("inbound_idempotency_keys")
    .set({
      body_hash: claim.bodyHash,
      claimed_at: claim.now,
      expires_at: claim.expiresAt,
      status: null,
      answer_headers: null,
      answer_body: null,
    })
    .where("inbound_webhook_id", "=", claim.inboundWebhookId)
    .where("key_hash", "=", claim.keyHash)
    .where((eb) =>
      eb.or([
        eb("expires_at", "<=", claim.now),
        eb.and([eb("status", "is", null), eb("claimed_at", "<", claim.abandonedBefore)]),
      ]),
    )
    .returning("key_hash")
    .executeTakeFirst();
  return row !== undefined;
}

/** Keeps the answer on this request's claim (identified by its claim time). */
export async function completeIdempotencyClaim(
  db: Kysely<Database>,
  claim: { inboundWebhookId: number; keyHash: string; claimedAt: number },
  answer: { status: number; headers: string; body: string | null },
): Promise<void> {
  await db
    .updateTable("inbound_idempotency_keys")
    .set({ status: answer.status, answer_headers: answer.headers, answer_body: answer.body })
    .where("inbound_webhook_id", "=", claim.inboundWebhookId)
    .where("key_hash", "=", claim.keyHash)
    .where("claimed_at", "=", claim.claimedAt)
    .where("status", "is", null)
    .execute();
}

/** Frees the key of this request's claim (the request was refused): a retry may use it again. */
export async function releaseIdempotencyClaim(
  db: Kysely<Database>,
  claim: { inboundWebhookId: number; keyHash: string; claimedAt: number },
): Promise<void> {
  await db
    .deleteFrom("inbound_idempotency_keys")
    .where("inbound_webhook_id", "=", claim.inboundWebhookId)
    .where("key_hash", "=", claim.keyHash)
    .where("claimed_at", "=", claim.claimedAt)
    .where("status", "is", null)
    .execute();
}

/**
 * Deletes up to `limit` keys that expired before `now` (the retention job, in batches, along the
 * expires_at index); answers how many.
 */
export async function deleteExpiredIdempotencyKeys(
  db: Kysely<Database>,
  now: number,
  limit: number,
): Promise<number> {
  const expired = await db
    .selectFrom("inbound_idempotency_keys")
    .select(["inbound_webhook_id", "key_hash"])
    .where("expires_at", "<=", now)
    .orderBy("expires_at")
    .limit(limit)
    .execute();
  if (expired.length === 0) return 0;
  // One statement per batch: rows named by their key, still expired (a takeover may have renewed one).
  const result = await db
    .deleteFrom("inbound_idempotency_keys")
    .where((eb) =>
      eb.or(
        expired.map((row) =>
          eb.and([
            eb("inbound_webhook_id", "=", row.inbound_webhook_id),
            eb("key_hash", "=", row.key_hash),
          ]),
        ),
      ),
    )
    .where("expires_at", "<=", now)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
