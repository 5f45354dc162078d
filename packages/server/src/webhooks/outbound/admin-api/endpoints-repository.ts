import type { Insertable, Kysely, Updateable } from "kysely";
import type { Database, WebhooksTable } from "../../../db/schema.js";
import type { AttemptStats, WebhookRow } from "./webhook-views.js";

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
  "signature_scheme",
  "room_filter",
  "headers_ciphertext",
  "max_per_second",
  "disabled_reason",
  "disabled_at",
  "consecutive_failures",
  "last_success_at",
  "last_failure_at",
  "last_error",
  "circuit",
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

/** Oldest first; `afterId` is the last id of the previous page. Fetches `limit + 1` for keysetSlice. */
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

/**
 * Attempts of the last 24 hours of the given endpoints, as a latency histogram per endpoint
 * (latencies are whole milliseconds and cluster, so there are few distinct values): exact
 * percentiles without loading every attempt. Served by (webhook_id, started_at).
 */
export async function attemptStatsSince(
  db: Kysely<Database>,
  webhookIds: readonly number[],
  since: number,
): Promise<Map<number, AttemptStats>> {
  const stats = new Map<number, AttemptStats>();
  if (webhookIds.length === 0) return stats;
  const rows = await db
    .selectFrom("webhook_attempts")
    .select((eb) => [
      "webhook_id",
      "duration_ms",
      eb.fn.countAll<number | string>().as("n"),
      eb.fn
        .sum<number | string>(
          eb
            .case()
            .when(eb.and([eb("response_status", ">=", 200), eb("response_status", "<", 300)]))
            .then(1)
            .else(0)
            .end(),
        )
        .as("ok"),
    ])
    .where("webhook_id", "in", [...webhookIds])
    .where("started_at", ">=", since)
    .groupBy(["webhook_id", "duration_ms"])
    .orderBy("webhook_id")
    .orderBy("duration_ms")
    .execute();
  for (const row of rows) {
    const id = Number(row.webhook_id);
    let entry = stats.get(id);
    if (!entry) stats.set(id, (entry = { attempts: 0, successes: 0, latencies: [] }));
    const n = Number(row.n);
    entry.attempts += n;
    entry.successes += Number(row.ok);
    entry.latencies.push([row.duration_ms, n]);
  }
  return stats;
}

/** The sealed secret of an endpoint (for rotation, which keeps the old one for the overlap). */
export async function findSealedSecret(
  db: Kysely<Database>,
  id: number,
): Promise<string | undefined> {
  const row = await db
    .selectFrom("webhooks")
    .select("secret_ciphertext")
    .where("id", "=", id)
    .executeTakeFirst();
  return row?.secret_ciphertext;
}
