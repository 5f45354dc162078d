import { EVENT_NAMES, paginate } from "@parley/client";
import { apiFromEnv } from "./api-from-env.js";
import type { CliIo } from "./cli-io.js";
import { formatTable, printJson } from "./format-table.js";

/** `parley webhooks list`: every outbound endpoint. */
export async function webhooksList(io: CliIo, options: { json?: boolean }): Promise<void> {
  const { api } = apiFromEnv(io.env);
  const webhooks = await paginate.all(api, "GET /api/admin/webhooks", { limit: 200 });
  if (options.json) return printJson(io.out, webhooks);
  if (webhooks.length === 0)
    return io.out("No webhooks yet: add one with `parley webhooks create`.");
  for (const line of formatTable(
    webhooks,
    [
      ["id", (w) => w.id],
      ["name", (w) => w.name],
      ["enabled", (w) => (w.enabled ? "yes" : "no")],
      ["events", (w) => summarizeEvents(w.events)],
      ["url", (w) => w.url],
    ],
    io.columns,
  )) {
    io.out(line);
  }
}

/** `all`, or the first two names and how many more: `--json` has the full list. */
export function summarizeEvents(events: readonly string[]): string {
  if (events.length === EVENT_NAMES.length) return "all";
  if (events.length <= 2) return events.join(",");
  return `${events.slice(0, 2).join(",")} +${events.length - 2}`;
}
