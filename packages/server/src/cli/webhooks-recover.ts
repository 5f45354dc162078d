import { apiFromEnv } from "./api-from-env.js";
import { CliError } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";
import { printJson } from "./format-table.js";
import { parseChoice } from "./parse-choice.js";
import { parseTime } from "./parse-time.js";
import { parseId } from "./webhooks-test.js";

const RECOVERABLE = ["FAILED", "EXHAUSTED"] as const;

/**
 * `parley webhooks recover <id> --since <time>`: queues again, once, each event first queued in
 * [since, until) whose delivery failed (see recover in deliveries-service.ts), and prints how
 * many; with `--dry-run`, only counts them. A progress line shows on a terminal only.
 */
export async function webhooksRecover(
  io: CliIo,
  idText: string,
  options: { since: string; until?: string; status?: string[]; dryRun?: boolean; json?: boolean },
): Promise<void> {
  const id = parseId(idText, "webhook id");
  const since = parseTime(options.since, "--since");
  const until = options.until === undefined ? undefined : parseTime(options.until, "--until");
  if (until !== undefined && until <= since)
    throw new CliError("--until must be later than --since");
  const statuses =
    options.status === undefined
      ? undefined
      : [
          ...new Set(
            options.status
              .flatMap((value) => value.split(","))
              .map((value) => value.trim())
              .filter(Boolean)
              .map((value) => parseChoice(value, RECOVERABLE, "--status")),
          ),
        ];
  if (statuses !== undefined && statuses.length === 0)
    throw new CliError(`--status must be one of ${RECOVERABLE.join(", ")}; got ""`);
  const { api } = apiFromEnv(io.env);
  const progress = io.progress(
    `${options.dryRun ? "counting" : "queueing"} the failed deliveries of webhook ${id} since ${since}`,
  );
  let queued: number;
  try {
    const { data } = await api("POST /api/admin/webhooks/{id}/recover", {
      id,
      since,
      ...(until === undefined ? {} : { until }),
      ...(statuses === undefined ? {} : { statuses }),
      ...(options.dryRun ? { dryRun: true } : {}),
    });
    queued = data.queued;
  } finally {
    progress.stop();
  }
  if (options.json) return printJson(io.out, options.dryRun ? { wouldQueue: queued } : { queued });
  const which = (statuses ?? ["EXHAUSTED"]).join(" or ");
  if (options.dryRun)
    return io.out(
      `Would queue ${queued} ${queued === 1 ? "delivery" : "deliveries"} again for webhook ${id} ` +
        `(${which}, queued since ${since}${until === undefined ? "" : ` until ${until}`}); ` +
        "nothing was queued: run it again without --dry-run to queue them.",
    );
  io.out(
    `Queued ${queued} ${queued === 1 ? "delivery" : "deliveries"} again for webhook ${id} ` +
      `(${which}, queued since ${since}${until === undefined ? "" : ` until ${until}`}).`,
  );
  if (queued === 10_000) io.out("  at most 10000 per call: run it again for the rest");
}
