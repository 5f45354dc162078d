import type { HealthTrend } from "@parley/client/wire";
import type { AppContext } from "../../../app-context.js";
import { AppError } from "../../../errors/app-error.js";
import { isoTime } from "../../../events/event-catalogue.js";
import { countAttemptsPerDay } from "./attempt-days-repository.js";
import { findWebhook } from "./endpoints-repository.js";

const DAY_MS = 86_400_000;
/** How many days the trend shows. */
export const TREND_DAYS = 7;

/**
 * The success rate of an endpoint's attempts over the last 7 days, one entry per 24 hours ending
 * now (not calendar days: the same in every time zone, and the last entry is the 24 hours the
 * endpoint's `health` shows), oldest first. Attempts are kept as long as deliveries (30 days by
 * default), so the week is always there.
 */
export async function healthTrend(ctx: AppContext, webhookId: number): Promise<HealthTrend> {
  if (!(await findWebhook(ctx.db, webhookId)))
    throw new AppError("not_found", `no webhook ${webhookId}`);
  const now = ctx.now();
  const since = now - TREND_DAYS * DAY_MS;
  const counted = new Map(
    (await countAttemptsPerDay(ctx.db, webhookId, since, now + 1)).map((row) => [row.day, row]),
  );
  return {
    webhookId,
    days: Array.from({ length: TREND_DAYS }, (_, day) => {
      const row = counted.get(day);
      const attempts = row?.attempts ?? 0;
      const successes = row?.successes ?? 0;
      return {
        start: isoTime(since + day * DAY_MS),
        end: isoTime(since + (day + 1) * DAY_MS),
        attempts,
        successes,
        successRate: attempts === 0 ? null : successes / attempts,
      };
    }),
  };
}
