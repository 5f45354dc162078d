import type { CompiledQuery, Kysely, Selectable, Updateable } from "kysely";
import type { Database, Flag, InboundWebhooksTable } from "../../db/schema.js";

/** The only layer that sees the query builder for inbound webhooks. */
export type InboundWebhookRow = Selectable<InboundWebhooksTable>;

/** What ingest needs about a token's webhook, read in one indexed query. */
export interface IngestTarget {
  id: number;
  roomId: number;
  displayName: string;
  avatarUrl: string | null;
  allowOverrides: boolean;
  /** The sealed signing secret (config/secret-box.ts), opened only by the signed routes. */
  signingSecretCiphertext: string | null;
}

export interface NewInboundWebhook {
  roomId: number;
  displayName: string;
  avatarUrl: string | null;
  enabled: boolean;
  allowOverrides: boolean;
  signingSecretCiphertext: string | null;
  tokenHash: string;
  tokenLast8: string;
  createdBy: number;
  now: number;
}

export type InboundWebhookChanges = Pick<
  Updateable<InboundWebhooksTable>,
  "display_name" | "avatar_url" | "enabled" | "allow_overrides" | "signing_secret_ciphertext"
>;

const flag = (value: boolean): Flag => (value ? 1 : 0);

export async function insertInboundWebhook(
  db: Kysely<Database>,
  input: NewInboundWebhook,
): Promise<InboundWebhookRow> {
  return db
    .insertInto("inbound_webhooks")
    .values({
      room_id: input.roomId,
      display_name: input.displayName,
      avatar_url: input.avatarUrl,
      enabled: flag(input.enabled),
      allow_overrides: flag(input.allowOverrides),
      signing_secret_ciphertext: input.signingSecretCiphertext,
      token_hash: input.tokenHash,
      token_last8: input.tokenLast8,
      created_by: input.createdBy,
      created_at: input.now,
      updated_at: input.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Ascending ids after `after`, `limit + 1` rows (the extra one tells whether a next page exists). */
export async function listInboundWebhookRows(
  db: Kysely<Database>,
  query: { after: number | undefined; limit: number; roomId: number | undefined },
): Promise<InboundWebhookRow[]> {
  let select = db
    .selectFrom("inbound_webhooks")
    .selectAll()
    .orderBy("id", "asc")
    .limit(query.limit + 1);
  if (query.after !== undefined) select = select.where("id", ">", query.after);
  if (query.roomId !== undefined) select = select.where("room_id", "=", query.roomId);
  return select.execute();
}

export async function findInboundWebhookRow(
  db: Kysely<Database>,
  id: number,
): Promise<InboundWebhookRow | undefined> {
  return db.selectFrom("inbound_webhooks").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function updateInboundWebhookRow(
  db: Kysely<Database>,
  id: number,
  changes: InboundWebhookChanges,
  now: number,
): Promise<InboundWebhookRow | undefined> {
  return db
    .updateTable("inbound_webhooks")
    .set({ ...changes, updated_at: now })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
}

/** Swaps hash and last 8 characters in one statement: the old token stops working at commit. */
export async function replaceInboundWebhookToken(
  db: Kysely<Database>,
  id: number,
  token: { hash: string; last8: string },
  now: number,
): Promise<InboundWebhookRow | undefined> {
  return db
    .updateTable("inbound_webhooks")
    .set({ token_hash: token.hash, token_last8: token.last8, updated_at: now })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteInboundWebhookRow(db: Kysely<Database>, id: number): Promise<boolean> {
  const result = await db.deleteFrom("inbound_webhooks").where("id", "=", id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * True when `roomId` names a room (or promoted DM) that has not been deleted. A direct message
 * that was not promoted is private to its two members: no integration posts into it.
 */
export async function roomIsOpen(db: Kysely<Database>, roomId: number): Promise<boolean> {
  const room = await db
    .selectFrom("rooms")
    .select("id")
    .where("id", "=", roomId)
    .where("kind", "=", "room")
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  return room !== undefined;
}

function ingestTargetQuery(db: Kysely<Database>, tokenHash: string) {
  return db
    .selectFrom("inbound_webhooks as w")
    .innerJoin("rooms as r", "r.id", "w.room_id")
    .select([
      "w.id",
      "w.room_id",
      "w.display_name",
      "w.avatar_url",
      "w.allow_overrides",
      "w.signing_secret_ciphertext",
    ])
    .where("w.token_hash", "=", tokenHash)
    .where("w.enabled", "=", 1)
    .where("r.kind", "=", "room")
    .where("r.deleted_at", "is", null);
}

type IngestTargetRow = Pick<
  InboundWebhookRow,
  "id" | "room_id" | "display_name" | "avatar_url" | "allow_overrides" | "signing_secret_ciphertext"
>;

// Ingest runs this on every request: building and compiling it once per database, instead of on
// every call, took a third off the lookup's cost (measured with the ingest benchmark).
const TOKEN_SLOT = "\u0000token-hash";
const compiledTargetQueries = new WeakMap<Kysely<Database>, CompiledQuery<IngestTargetRow>>();

/**
 * The enabled webhook a token hash belongs to, if its room still exists. Unknown, disabled and
 * orphaned all come back as undefined, so the caller cannot answer them differently.
 */
export async function findIngestTarget(
  db: Kysely<Database>,
  tokenHash: string,
): Promise<IngestTarget | undefined> {
  let compiled = compiledTargetQueries.get(db);
  if (!compiled) {
    compiled = ingestTargetQuery(db, TOKEN_SLOT).compile();
    compiledTargetQueries.set(db, compiled);
  }
  const parameters = compiled.parameters.map((value) => (value === TOKEN_SLOT ? tokenHash : value));
  const row = (await db.executeQuery<IngestTargetRow>({ ...compiled, parameters })).rows[0];
  if (!row) return undefined;
  return {
    id: row.id,
    roomId: row.room_id,
    displayName: row.display_name,
    avatarUrl: row.avatar_url,
    allowOverrides: row.allow_overrides === 1,
    signingSecretCiphertext: row.signing_secret_ciphertext,
  };
}
