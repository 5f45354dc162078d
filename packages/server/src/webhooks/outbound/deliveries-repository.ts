import type { Kysely } from "kysely";
import type { Database, DeliveryStatus } from "../../db/schema.js";
import type { AttemptRow, DeliveryRow, DeliverySummaryRow } from "./webhook-views.js";

/** Queries on `webhook_deliveries` and `webhook_attempts` for the delivery log. */
const SUMMARY_COLUMNS = [
  "id",
  "webhook_id",
  "event",
  "status",
  "attempts",
  "next_attempt_at",
  "last_response_status",
  "created_at",
  "updated_at",
] as const;

export interface DeliveryFilter {
  status?: DeliveryStatus | undefined;
  event?: string | undefined;
  /** The last id of the previous page: this page holds older (smaller) ids. */
  beforeId: number | undefined;
  limit: number;
}

/** Newest first, without bodies. Served by the (webhook_id, id) index. Fetches `limit + 1`. */
export async function listDeliveries(
  db: Kysely<Database>,
  webhookId: number,
  filter: DeliveryFilter,
): Promise<DeliverySummaryRow[]> {
  let query = db
    .selectFrom("webhook_deliveries")
    .select(SUMMARY_COLUMNS)
    .where("webhook_id", "=", webhookId)
    .orderBy("id", "desc")
    .limit(filter.limit + 1);
  if (filter.status !== undefined) query = query.where("status", "=", filter.status);
  if (filter.event !== undefined) query = query.where("event", "=", filter.event);
  if (filter.beforeId !== undefined) query = query.where("id", "<", filter.beforeId);
  return query.execute();
}

/** A delivery of that endpoint; undefined when it does not exist or belongs to another one. */
export async function findDelivery(
  db: Kysely<Database>,
  webhookId: number,
  deliveryId: number,
): Promise<DeliveryRow | undefined> {
  return db
    .selectFrom("webhook_deliveries")
    .selectAll()
    .where("id", "=", deliveryId)
    .where("webhook_id", "=", webhookId)
    .executeTakeFirst();
}

export async function listAttempts(
  db: Kysely<Database>,
  deliveryId: number,
): Promise<AttemptRow[]> {
  return db
    .selectFrom("webhook_attempts")
    .selectAll()
    .where("delivery_id", "=", deliveryId)
    .orderBy("attempt", "asc")
    .orderBy("id", "asc")
    .execute();
}
