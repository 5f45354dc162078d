/**
 * Generates many delivery rows in the database itself (one INSERT ... SELECT over a series: no
 * round trip per row), as a long-running install has them. Shared by the delivery search benchmark
 * and the large-table benchmark.
 */
import { sql } from "kysely";
import type { AppContext } from "../src/app-context.js";
import { sealSecret } from "../src/config/secret-box.js";

export const DAY_MS = 86_400_000;

/** The twelve event names the generated rows cycle through (row n has event n % 12). */
const EVENT = sql`CASE n % 12 WHEN 0 THEN 'MESSAGE_CREATED' WHEN 1 THEN 'USER_JOINED_ROOM'
    WHEN 2 THEN 'USER_LEFT_ROOM' WHEN 3 THEN 'ROOM_CREATED' WHEN 4 THEN 'ROOM_DELETED'
    WHEN 5 THEN 'FILE_UPLOADED' WHEN 6 THEN 'FILE_INFECTION_DETECTED'
    WHEN 7 THEN 'ADMIN_USER_DISABLED' WHEN 8 THEN 'ADMIN_USER_DELETED'
    WHEN 9 THEN 'ADMIN_ROOM_DELETED' WHEN 10 THEN 'MESSAGE_AUTO_MODERATION_FLAGGED'
    ELSE 'MESSAGE_AUTO_MODERATION_QUARANTINED' END`;

export interface SeedDeliveriesOptions {
  rows: number;
  /** Row n goes to endpoint `firstWebhookId + n % endpoints` (ids made by `insertEndpoints`). */
  firstWebhookId: number;
  endpoints: number;
  /** Row n is created at `start + n * spanMs / rows`: ascending with the id, as real rows are. */
  start: number;
  spanMs: number;
  /**
   * "mixed": 3% FAILED, 2% EXHAUSTED, 1% PENDING (with no next attempt: never claimed), the rest
   * SUCCESS. "finished": 2% EXHAUSTED, the rest SUCCESS (what the retention job may delete).
   */
  statuses: "mixed" | "finished";
  /** Room events name room n % rooms + 1 (default 500). */
  rooms?: number;
  /**
   * Refresh the planner's statistics afterwards (default true). PostgreSQL's autovacuum does it by
   * itself after such an insert; Parley never runs ANALYZE on SQLite, so an install there has
   * statistics only when its operator made them.
   */
  analyze?: boolean;
}

/** Inserts `count` endpoints subscribed to every event; answers their ids, ascending and contiguous. */
export async function insertEndpoints(
  ctx: AppContext,
  count: number,
  options: { enabled: boolean; url?: (i: number) => string } = { enabled: true },
): Promise<number[]> {
  const now = Date.now();
  const rows = await ctx.db
    .insertInto("webhooks")
    .values(
      Array.from({ length: count }, (_, i) => ({
        name: `endpoint ${i + 1}`,
        url: options.url?.(i) ?? `https://hooks.example.com/${i + 1}`,
        secret_ciphertext: sealSecret(ctx.keys.secretKey, "bench-secret-0123456789"),
        events: '["*"]',
        enabled: options.enabled ? (1 as const) : (0 as const),
        created_at: now,
        updated_at: now,
      })),
    )
    .returning("id")
    .execute();
  const ids = rows.map((row) => row.id).sort((a, b) => a - b);
  if (ids.at(-1)! - ids[0]! !== count - 1) throw new Error("endpoint ids are not contiguous");
  return ids;
}

/** Generates the rows (see SeedDeliveriesOptions), then refreshes the planner's statistics. */
export async function seedDeliveries(
  ctx: AppContext,
  options: SeedDeliveriesOptions,
): Promise<void> {
  const { rows, firstWebhookId, endpoints, start, spanMs } = options;
  const rooms = options.rooms ?? 500;
  // n -> endpoint, event n % 12, room n % rooms + 1 for room events, message n for
  // MESSAGE_CREATED, status by n % 100.
  const columns = sql`(webhook_id, event, body, status, attempts, next_attempt_at, locked_until,
    locked_by, last_response_status, created_at, updated_at, event_id, room_id, message_id)`;
  const status =
    options.statuses === "mixed"
      ? sql`CASE WHEN n % 100 < 3 THEN 'FAILED' WHEN n % 100 < 5 THEN 'EXHAUSTED'
          WHEN n % 100 < 6 THEN 'PENDING' ELSE 'SUCCESS' END`
      : sql`CASE WHEN n % 100 < 2 THEN 'EXHAUSTED' ELSE 'SUCCESS' END`;
  const created = sql`${start} + (n * ${spanMs}) / ${rows}`;
  const room = sql`CASE WHEN n % 12 IN (0, 1, 2, 3, 4, 5, 9) THEN n % ${rooms} + 1 END`;
  const message = sql`CASE WHEN n % 12 = 0 THEN n END`;
  const body = sql`'{"event":"bench","timestamp":"2026-11-22T10:00:00.000Z","webhookId":1,"data":{"n":' || n || '}}'`;
  const webhook = sql`${firstWebhookId} + n % ${endpoints}`;
  if (ctx.database.dialect === "postgres") {
    await sql`
      INSERT INTO webhook_deliveries ${columns}
      SELECT ${webhook}, ${EVENT}, ${body}, ${status}, 1, NULL, NULL, NULL, 204,
        ${created}, ${created}, 'evt_' || lpad(n::text, 26, '0'), ${room}, ${message}
      FROM generate_series(1, ${rows}::bigint) AS n
    `.execute(ctx.db);
    if (options.analyze ?? true) await sql`ANALYZE webhook_deliveries`.execute(ctx.db);
  } else {
    await sql`
      WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${rows})
      INSERT INTO webhook_deliveries ${columns}
      SELECT ${webhook}, ${EVENT}, ${body}, ${status}, 1, NULL, NULL, NULL, 204,
        ${created}, ${created}, 'evt_' || printf('%026d', n), ${room}, ${message}
      FROM s
    `.execute(ctx.db);
    if (options.analyze ?? true) await sql`ANALYZE`.execute(ctx.db);
  }
}
