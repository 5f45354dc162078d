import type { Insertable, Kysely, Updateable } from "kysely";
import type { Database, WebhooksTable } from "../../db/schema.js";
import type { WebhookRow } from "./webhook-views.js";

/**
 * Queries on `webhooks` for the admin API. Reads never select `secret_ciphertext`: what the
 * admin API cannot load, it cannot leak. Every function takes the database or a transaction.
 */
const PUBLIC_COLUMNS = [
  "id",
  "name",
  "url",
  "events",
  "enabled",
  "created_at",
  "updated_at",
] as const;

export async function insertWebhook(
  db: Kysely<Database>,
  values: Insertable<WebhooksTable>,
): Promise<WebhookRow> {
  return db
    .insertInto("webhooks")
    .values(values)
    .returning(PUBLIC_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function findWebhook(
  db: Kysely<Database>,
  id: number,
): Promise<WebhookRow | undefined> {
  return db.selectFrom("webhooks").select(PUBLIC_COLUMNS).where("id", "=", id).executeTakeFirst();
}

/** Oldest first; `afterId` is the last id of the previous page. Fetches `limit + 1` for toPage. */
export async function listWebhooks(
  db: Kysely<Database>,
  page: { afterId: number | undefined; limit: number },
): Promise<WebhookRow[]> {
  let query = db
    .selectFrom("webhooks")
    .select(PUBLIC_COLUMNS)
    .orderBy("id", "asc")
    .limit(page.limit + 1);
  if (page.afterId !== undefined) query = query.where("id", ">", page.afterId);
  return query.execute();
}

export async function updateWebhook(
  db: Kysely<Database>,
  id: number,
  changes: Updateable<WebhooksTable>,
): Promise<WebhookRow | undefined> {
  return db
    .updateTable("webhooks")
    .set(changes)
    .where("id", "=", id)
    .returning(PUBLIC_COLUMNS)
    .executeTakeFirst();
}

/**
 * Deletes an endpoint. Its deliveries and their attempts go with it through the foreign keys'
 * ON DELETE CASCADE (SQLite runs with foreign_keys = ON), all in this one statement, so no
 * delivery of a deleted endpoint is ever left queued. Returns false for an unknown id.
 */
export async function deleteWebhook(db: Kysely<Database>, id: number): Promise<boolean> {
  const deleted = await db
    .deleteFrom("webhooks")
    .where("id", "=", id)
    .returning("id")
    .executeTakeFirst();
  return deleted !== undefined;
}
