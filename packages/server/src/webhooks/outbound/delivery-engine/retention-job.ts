import { setTimeout as sleep } from "node:timers/promises";
import type { Kysely } from "kysely";
import type { AppContext } from "../../../app-context.js";
import { withJobLock, type JobLock } from "../../../db/job-lock.js";
import type { Database } from "../../../db/schema.js";
import { expireIdempotencyKeys } from "../../inbound/idempotency/expire-idempotency-keys.js";
import type { DeliveryLog } from "./delivery-log.js";

const DAY_MS = 24 * 60 * 60 * 1000;
/** The job's lock: its `job_locks` row, its advisory key ("parley" + 1 in ASCII), an hour's lease. */
const RETENTION_LOCK: Omit<JobLock, "now"> = {
  name: "delivery-retention",
  advisoryKey: 0x7061726c657901n,
  leaseMs: 60 * 60 * 1000,
};
/** Rows deleted per statement: short write locks, so deliveries keep flowing meanwhile. */
export const RETENTION_BATCH = 500;

export interface RetentionRun {
  /** False when another process held the job's lock. */
  ran: boolean;
  deleted: number;
  /** Events (webhook_events) deleted: kept as long as deliveries, for replay. */
  events: number;
}

/**
 * Deletes finished deliveries (SUCCESS or EXHAUSTED) created more than `retentionDays` ago, with
 * their attempts (ON DELETE CASCADE), then the kept events (webhook_events) of the same age. Unfinished rows are kept whatever their age: a delivery that
 * may still be attempted is never lost to the log clean-up. With the default policy (5 attempts
 * over about 8 minutes) a delivery is finished long before 30 days; what can age is a delivery
 * queued for an endpoint that stays disabled, and it is kept until the endpoint is enabled again
 * (then sent) or deleted (then dropped with it).
 *
 * One process at a time (`withJobLock`): a process that does not get the job's lock skips the run.
 */
export async function runDeliveryRetention(
  ctx: Pick<AppContext, "db">,
  options: {
    retentionDays: number;
    now: number;
    /** Checked between batches: true ends the run early (the rest waits for the next run). */
    stopping?: () => boolean;
  },
): Promise<RetentionRun> {
  const stopping = options.stopping ?? (() => false);
  const cutoff = options.now - options.retentionDays * DAY_MS;
  const run = await withJobLock(ctx.db, { ...RETENTION_LOCK, now: options.now }, async (db) => ({
    deleted: await deleteFinishedBefore(db, cutoff, stopping),
    // The events replay can send again: kept as long as the deliveries of the same age.
    events: stopping() ? 0 : await deleteEventsBefore(db, cutoff, stopping),
  }));
  return run.ran ? { ran: true, ...run.value } : { ran: false, deleted: 0, events: 0 };
}

/** Deletes the events older than `cutoff`, in batches like the deliveries. */
async function deleteEventsBefore(
  db: Kysely<Database>,
  cutoff: number,
  stopping: () => boolean,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const started = performance.now();
    const result = await db
      .deleteFrom("webhook_events")
      .where(
        "id",
        "in",
        db
          .selectFrom("webhook_events")
          .select("id")
          .where("created_at", "<", cutoff)
          .limit(RETENTION_BATCH),
      )
      .executeTakeFirst();
    const count = Number(result.numDeletedRows);
    deleted += count;
    if (count < RETENTION_BATCH || stopping()) return deleted;
    await sleep(Math.max(1, performance.now() - started));
  }
}

/**
 * Deletes in batches of RETENTION_BATCH rows, each batch followed by a pause as long as the batch
 * took: the clean-up gets at most about half of the database's time, and the event loop runs
 * between batches. That matters most on SQLite, whose driver is synchronous: without the pause a
 * deletion of a million rows would hold the process (HTTP included) until the last batch.
 */
async function deleteFinishedBefore(
  db: Kysely<Database>,
  cutoff: number,
  stopping: () => boolean,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const started = performance.now();
    const result = await db
      .deleteFrom("webhook_deliveries")
      .where(
        "id",
        "in",
        db
          .selectFrom("webhook_deliveries")
          .select("id")
          .where("created_at", "<", cutoff)
          .where("status", "in", ["SUCCESS", "EXHAUSTED"])
          .limit(RETENTION_BATCH),
      )
      .executeTakeFirst();
    const count = Number(result.numDeletedRows);
    deleted += count;
    if (count < RETENTION_BATCH || stopping()) return deleted;
    await sleep(Math.max(1, performance.now() - started));
  }
}

export interface RetentionJob {
  stop(): Promise<void>;
}

/**
 * Runs the retention clean-up shortly after start, then daily: the delivery log, then the inbound
 * idempotency keys that expired. Each process schedules it; the lock makes sure only one runs the
 * delivery clean-up at a time, and a second run on the same day finds little to delete.
 */
export function startRetentionJob(
  ctx: AppContext,
  options: { log?: DeliveryLog; firstRunDelayMs?: number; intervalMs?: number } = {},
): RetentionJob {
  const intervalMs = options.intervalMs ?? DAY_MS;
  let running: Promise<void> | undefined;
  let stopped = false;

  const run = () => {
    if (stopped || running) return;
    const now = ctx.now();
    running = runDeliveryRetention(ctx, {
      retentionDays: ctx.config.deliveryRetentionDays,
      now,
      stopping: () => stopped,
    })
      .then(async (result) => {
        if (result.deleted > 0) {
          options.log?.info({ deleted: result.deleted }, "deleted expired webhook deliveries");
        }
        if (result.events > 0)
          options.log?.info({ deleted: result.events }, "deleted expired webhook events");
        const keys = await expireIdempotencyKeys(ctx, { now, stopping: () => stopped });
        if (keys > 0) options.log?.info({ deleted: keys }, "deleted expired idempotency keys");
      })
      .catch((error: Error) =>
        options.log?.warn(
          { err: error.message },
          "delivery retention failed; it runs again at the next interval",
        ),
      )
      .finally(() => (running = undefined));
  };

  const first = setTimeout(run, options.firstRunDelayMs ?? 60_000);
  const daily = setInterval(run, intervalMs);
  first.unref();
  daily.unref();
  return {
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(daily);
      await running;
    },
  };
}
