import type { Kysely, Selectable } from "kysely";
import { compiledOnce } from "../../../db/compiled-query.js";
import type { Database, InboundIdempotencyKeysTable } from "../../../db/schema.js";

/**
 * The statements of the idempotency claim (see run-idempotent.ts for how they are used). A claim
 * is written with its answer, in the unit of work of what it answers (the post, or the answer
 * alone when nothing is posted), by one statement that the database alone lets win, on any number
 * of processes: an insert that the primary key (inbound_webhook_id, key_hash) lets through once,
 * or, on a conflict, an update of the row only when it may be taken over (expired, or a claim left
 * in flight by an older release since IDEMPOTENCY_ABANDONED_AFTER_MS), re-checked on the row as
 * it is then (PostgreSQL's ON CONFLICT DO UPDATE waits for a concurrent insert of the key to
 * commit or roll back and judges the row it left; SQLite has one writer). Nothing is held across
 * the request's own work.
 */
export type IdempotencyRow = Selectable<InboundIdempotencyKeysTable>;

/** A claim as written: its key, when, and the answer it keeps. */
export type KeptClaim = {
  inboundWebhookId: number;
  keyHash: string;
  bodyHash: string;
  now: number;
  expiresAt: number;
  status: number;
  /** The answer's headers as JSON. */
  headers: string;
  body: string | null;
};

/** When the row of a key may be taken over by a new claim: expired, or in flight and abandoned. */
const TAKE_OVER = (abandonedAfterMs: number, row: string, excluded: string) =>
  `${row}."expires_at" <= ${excluded}."claimed_at"
    or (${row}."status" is null and ${row}."claimed_at" < ${excluded}."claimed_at" - ${abandonedAfterMs})`;

/**
 * Writes the claim with its answer; true when this request won the key (no row had it, or its row
 * could be taken over), false when another request holds it (nothing written).
 */
export async function keepIdempotencyClaim(
  db: Kysely<Database>,
  claim: KeptClaim,
  abandonedAfterMs: number,
): Promise<boolean> {
  return (await upsertClaim(db, { ...claim, abandonedAfterMs })).rows.length > 0;
}

// Every keyed request on SQLite runs it: built and compiled once.
const upsertClaim = compiledOnce<{ key_hash: string }, KeptClaim & { abandonedAfterMs: number }>(
  (db, slot) =>
    db
      .insertInto("inbound_idempotency_keys")
      .values({
        inbound_webhook_id: slot("inboundWebhookId"),
        key_hash: slot("keyHash"),
        body_hash: slot("bodyHash"),
        claimed_at: slot("now"),
        expires_at: slot("expiresAt"),
        status: slot("status"),
        answer_headers: slot("headers"),
        answer_body: slot("body"),
      })
      .onConflict((oc) =>
        oc
          .columns(["inbound_webhook_id", "key_hash"])
          .doUpdateSet((eb) => ({
            body_hash: eb.ref("excluded.body_hash"),
            claimed_at: eb.ref("excluded.claimed_at"),
            expires_at: eb.ref("excluded.expires_at"),
            status: eb.ref("excluded.status"),
            answer_headers: eb.ref("excluded.answer_headers"),
            answer_body: eb.ref("excluded.answer_body"),
          }))
          .where((eb) =>
            eb.or([
              eb("inbound_idempotency_keys.expires_at", "<=", eb.ref("excluded.claimed_at")),
              eb.and([
                eb("inbound_idempotency_keys.status", "is", null),
                eb(
                  "inbound_idempotency_keys.claimed_at",
                  "<",
                  eb(eb.ref("excluded.claimed_at"), "-", slot("abandonedAfterMs")),
                ),
              ]),
            ]),
          ),
      )
      .returning("key_hash"),
);

const CLAIM_COLUMNS = `("inbound_webhook_id", "key_hash", "body_hash", "claimed_at", "expires_at",
    "status", "answer_headers", "answer_body")`;
const CLAIM_UPDATE = `on conflict ("inbound_webhook_id", "key_hash") do update set
    "body_hash" = excluded."body_hash", "claimed_at" = excluded."claimed_at",
    "expires_at" = excluded."expires_at", "status" = excluded."status",
    "answer_headers" = excluded."answer_headers", "answer_body" = excluded."answer_body"`;

/**
 * keepIdempotencyClaim as the CTE "claimed" of a post's single statement (PostgreSQL), over
 * "ids" (one row: the new message's id): the answer's body is its text around the id (`prefix`
 * id `suffix`; null when it has none). At most one row, none when the claim was lost. Parameters
 * from `$first`, in the order of idempotencyClaimValues.
 */
export function idempotencyClaimCte(first: number, abandonedAfterMs: number): string {
  const $ = (k: number, type: string) => `$${first + k}::${type}`;
  return `"claimed" as (
  insert into "inbound_idempotency_keys" ${CLAIM_COLUMNS}
  select ${$(0, "bigint")}, ${$(1, "text")}, ${$(2, "text")}, ${$(3, "bigint")}, ${$(4, "bigint")},
    ${$(5, "integer")}, ${$(6, "text")}, ${$(7, "text")} || d."id"::text || ${$(8, "text")}
  from "ids" d
  ${CLAIM_UPDATE}
  where ${TAKE_OVER(abandonedAfterMs, '"inbound_idempotency_keys"', "excluded")}
  returning "key_hash")`;
}

/** The claim's values in a statement, in order; `body` split around the message id. */
export function idempotencyClaimValues(
  claim: Omit<KeptClaim, "body">,
  body: { prefix: string; suffix: string } | null,
): unknown[] {
  return [
    claim.inboundWebhookId,
    claim.keyHash,
    claim.bodyHash,
    claim.now,
    claim.expiresAt,
    claim.status,
    claim.headers,
    body?.prefix ?? null,
    body?.suffix ?? null,
  ];
}

/** The columns idempotencyClaimValues adds to a combined statement's "input", and their types. */
export const IDEMPOTENCY_CLAIM_COLUMNS = [
  "claim_webhook_id",
  "claim_key_hash",
  "claim_body_hash",
  "claim_at",
  "claim_expires_at",
  "answer_status",
  "answer_headers",
  "answer_prefix",
  "answer_suffix",
] as const;
export const IDEMPOTENCY_CLAIM_TYPES = [
  "bigint",
  "text",
  "text",
  "bigint",
  "bigint",
  "integer",
  "text",
  "text",
  "text",
] as const;

/**
 * The claims of many posts in one statement (PostgreSQL, the combined form), over "ids" (ord,
 * id: the posts whose checks passed) and "input" (IDEMPOTENCY_CLAIM_COLUMNS): "claimants", one
 * post per key (the first; its duplicates in the same statement lose, as they would to a post
 * committed before them), in key order, so that statements of several processes take the keys'
 * row locks in one order and cannot deadlock on them; "claimed", the claims written; and "won"
 * (ord, id), the posts whose claim was won.
 */
export function idempotencyClaimBatchCtes(abandonedAfterMs: number): string {
  return `"claimants" as (
  select distinct on (i."claim_webhook_id", i."claim_key_hash") d."ord", d."id", i."claim_webhook_id",
    i."claim_key_hash", i."claim_body_hash", i."claim_at", i."claim_expires_at", i."answer_status",
    i."answer_headers", i."answer_prefix" || d."id"::text || i."answer_suffix" as "answer_body"
  from "ids" d join "input" i on i."ord" = d."ord"
  order by i."claim_webhook_id", i."claim_key_hash", d."ord"),
"claimed" as (
  insert into "inbound_idempotency_keys" ${CLAIM_COLUMNS}
  select c."claim_webhook_id", c."claim_key_hash", c."claim_body_hash", c."claim_at",
    c."claim_expires_at", c."answer_status", c."answer_headers", c."answer_body"
  from "claimants" c
  order by c."claim_webhook_id", c."claim_key_hash"
  ${CLAIM_UPDATE}
  where ${TAKE_OVER(abandonedAfterMs, '"inbound_idempotency_keys"', "excluded")}
  returning "inbound_webhook_id", "key_hash"),
"won" as (
  select c."ord", c."id" from "claimants" c
  join "claimed" k on k."inbound_webhook_id" = c."claim_webhook_id" and k."key_hash" = c."claim_key_hash")`;
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
