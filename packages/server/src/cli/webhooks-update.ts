import type { UpdateWebhookParams } from "@parley/client";
import { apiFromEnv } from "./api-from-env.js";
import { CliError } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";
import { printJson } from "./format-table.js";
import { ORDERINGS } from "@parley/client/wire";
import { parseChoice, parseEvents } from "./parse-choice.js";
import { parseId } from "./webhooks-test.js";

export interface WebhooksUpdateOptions {
  name?: string;
  url?: string;
  events?: string[];
  secret?: string;
  enable?: boolean;
  disable?: boolean;
  /** none, room or endpoint. */
  ordering?: string;
  json?: boolean;
}

/** `parley webhooks update <id>`: changes only the fields given. */
export async function webhooksUpdate(
  io: CliIo,
  idText: string,
  options: WebhooksUpdateOptions,
): Promise<void> {
  const id = parseId(idText, "webhook id");
  if (options.enable && options.disable)
    throw new CliError("--enable and --disable cannot be given together");
  const data: UpdateWebhookParams = {};
  if (options.name !== undefined) data.name = options.name;
  if (options.url !== undefined) data.url = options.url;
  if (options.events !== undefined) data.events = parseEvents(options.events);
  if (options.secret !== undefined) data.secret = options.secret;
  if (options.enable) data.enabled = true;
  if (options.disable) data.enabled = false;
  if (options.ordering !== undefined)
    data.ordering = parseChoice(options.ordering, ORDERINGS, "--ordering");
  if (Object.keys(data).length === 0)
    throw new CliError(
      "nothing to change: give at least one of --name, --url, --events, --secret, --enable, --disable, --ordering",
    );
  const { api } = apiFromEnv(io.env);
  const { data: webhook } = await api("PATCH /api/admin/webhooks/{id}", { id, data });
  if (options.json) return printJson(io.out, webhook);
  io.out(`Updated webhook ${webhook.id} "${webhook.name}" -> ${webhook.url}`);
  io.out(`  events: ${webhook.events.join(", ")}${webhook.enabled ? "" : " (disabled)"}`);
  if (data.ordering !== undefined) io.out(`  ordering: ${webhook.ordering}`);
  if (data.secret !== undefined) io.out("  secret: replaced (deliveries from now on use it)");
}
