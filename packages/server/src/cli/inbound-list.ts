import { paginate } from "@parley/client";
import { apiFromEnv } from "./api-from-env.js";
import type { CliIo } from "./cli-io.js";
import { formatTable, printJson } from "./format-table.js";
import { parseId } from "./webhooks-test.js";

/** `parley inbound list`: every inbound webhook (tokens show only their last 8 characters). */
export async function inboundList(
  io: CliIo,
  options: { room?: string; json?: boolean },
): Promise<void> {
  const { api } = apiFromEnv(io.env);
  const roomId = options.room === undefined ? undefined : parseId(options.room, "--room");
  const hooks = await paginate.all(api, "GET /api/admin/inbound-webhooks", { roomId, limit: 200 });
  if (options.json) return printJson(io.out, hooks);
  if (hooks.length === 0)
    return io.out("No inbound webhooks yet: add one with `parley inbound create`.");
  for (const line of formatTable(
    hooks,
    [
      ["id", (h) => h.id],
      ["room", (h) => h.roomId],
      ["name", (h) => h.displayName],
      ["enabled", (h) => (h.enabled ? "yes" : "no")],
      ["token", (h) => `…${h.tokenLast8}`],
      ["created", (h) => h.createdAt],
    ],
    io.columns,
  )) {
    io.out(line);
  }
}
