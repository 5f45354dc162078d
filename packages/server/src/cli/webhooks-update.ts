import { apiFromEnv } from "./api-from-env.js";
import { CliError } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";
import { describeEndpoint } from "./describe-endpoint.js";
import { endpointSettingsFrom, type EndpointSettingOptions } from "./endpoint-settings.js";
import { printJson } from "./format-table.js";
import { parseId } from "./webhooks-test.js";

export interface WebhooksUpdateOptions extends EndpointSettingOptions {
  enable?: boolean;
  disable?: boolean;
  json?: boolean;
}

/** `parley webhooks update <id>`: changes only the fields given (flags and/or `--from-file`). */
export async function webhooksUpdate(
  io: CliIo,
  idText: string,
  options: WebhooksUpdateOptions,
): Promise<void> {
  const id = parseId(idText, "webhook id");
  if (options.enable && options.disable)
    throw new CliError("--enable and --disable cannot be given together");
  const api = () => apiFromEnv(io.env).api;
  const data = await endpointSettingsFrom(options, api, undefined, io.env);
  if (options.enable) data.enabled = true;
  if (options.disable) data.enabled = false;
  if (Object.keys(data).length === 0)
    throw new CliError(
      "nothing to change: give at least one setting (see parley webhooks update --help) or --from-file",
    );
  const { data: webhook } = await api()("PATCH /api/admin/webhooks/{id}", { id, data });
  if (options.json) return printJson(io.out, webhook);
  io.out(`Updated webhook ${webhook.id} "${webhook.name}" -> ${webhook.url}`);
  for (const line of describeEndpoint(webhook)) io.out(line);
  if (data.secret !== undefined) io.out("  secret: replaced (deliveries from now on use it)");
}
