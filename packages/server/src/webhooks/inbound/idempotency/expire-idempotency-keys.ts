import { setTimeout as sleep } from "node:timers/promises";
import type { AppContext } from "../../../app-context.js";
import { deleteExpiredIdempotencyKeys } from "./idempotency-repository.js";

/** Keys deleted per statement: short write locks, so ingest keeps flowing meanwhile. */
export const IDEMPOTENCY_EXPIRY_BATCH = 500;

/**
 * Deletes the idempotency keys that expired (24 h after their claim), in batches, each followed by
 * a pause as long as it took (as the delivery retention does, for SQLite's synchronous driver).
 * Run by the daily retention job; until then an expired key is already treated as absent, so
 * how late it runs changes only the table's size. Any process may run it at any time: deleting
 * an expired row twice deletes nothing the second time.
 */
export async function expireIdempotencyKeys(
  ctx: Pick<AppContext, "db">,
  options: { now: number; stopping?: () => boolean },
): Promise<number> {
  const stopping = options.stopping ?? (() => false);
  let deleted = 0;
  for (;;) {
    const started = performance.now();
    const count = await deleteExpiredIdempotencyKeys(ctx.db, options.now, IDEMPOTENCY_EXPIRY_BATCH);
    deleted += count;
    if (count < IDEMPOTENCY_EXPIRY_BATCH || stopping()) return deleted;
    await sleep(Math.max(1, performance.now() - started));
  }
}
