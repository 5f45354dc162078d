import { apiFromEnv } from "./api-from-env.js";
import type { CliIo } from "./cli-io.js";
import { printJson } from "./format-table.js";
import { parseId } from "./webhooks-test.js";

/** `parley webhooks delete <id>`: removes an endpoint; its queued deliveries are dropped. */
export async function webhooksDelete(
  io: CliIo,
  idText: string,
  options: { json?: boolean },
): Promise<void> {
  const id = parseId(idText, "webhook id");
  const { api } = apiFromEnv(io.env);
  await api("DELETE /api/admin/webhooks/{id}", { id });
  if (options.json) return printJson(io.out, { id, deleted: true });
  io.out(`Deleted webhook ${id}; its queued deliveries were dropped.`);
}
