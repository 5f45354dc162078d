import readline from "node:readline/promises";
import { apiFromEnv } from "./api-from-env.js";
import { CliError } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";
import { printJson } from "./format-table.js";
import { parseTime } from "./parse-time.js";
import { parseId } from "./webhooks-test.js";

export interface ReplayMissingOptions {
  since: string;
  until?: string;
  dryRun?: boolean;
  yes?: boolean;
  json?: boolean;
}

/**
 * `parley webhooks replay-missing <id> --since <time>`: sends every event of the range that the
 * endpoint's subscription hears now and that it never got, count first: `--dry-run` only counts;
 * on a terminal it asks before sending; a script says `--yes`.
 */
export async function webhooksReplayMissing(
  io: CliIo,
  idText: string,
  options: ReplayMissingOptions,
  confirm: (question: string) => Promise<boolean> = askOnTerminal,
): Promise<void> {
  const id = parseId(idText, "webhook id");
  const since = parseTime(options.since, "--since");
  const until = options.until === undefined ? undefined : parseTime(options.until, "--until");
  if (until !== undefined && until <= since)
    throw new CliError("--until must be later than --since");
  if (options.dryRun && options.yes)
    throw new CliError("--dry-run and --yes cannot be given together");
  const { api } = apiFromEnv(io.env);
  const range = { id, since, ...(until === undefined ? {} : { until }) };
  const what = `for webhook ${id} (since ${since}${until === undefined ? "" : ` until ${until}`})`;
  if (!options.yes) {
    const { data } = await api("POST /api/admin/webhooks/{id}/replay-missing", {
      ...range,
      dryRun: true,
    });
    const count = data.queued;
    if (options.dryRun) {
      if (options.json) return printJson(io.out, { wouldQueue: count });
      return io.out(
        `${count} missing ${count === 1 ? "event" : "events"} ${what}; nothing was sent.`,
      );
    }
    if (count === 0) {
      if (options.json) return printJson(io.out, { queued: 0 });
      return io.out(`No missing events ${what}.`);
    }
    if (!process.stdin.isTTY)
      throw new CliError(
        `${count} missing ${count === 1 ? "event" : "events"} ${what} would be sent: pass --yes to send them, or --dry-run to only count`,
      );
    if (
      !(await confirm(`Send ${count} missing ${count === 1 ? "event" : "events"} ${what}? [y/N] `))
    )
      return io.out("Nothing was sent.");
  }
  const { data } = await api("POST /api/admin/webhooks/{id}/replay-missing", range);
  if (options.json) return printJson(io.out, data);
  io.out(
    `Queued ${data.queued} missing ${data.queued === 1 ? "event" : "events"} ${what}, in event order.`,
  );
}

async function askOnTerminal(question: string): Promise<boolean> {
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}
