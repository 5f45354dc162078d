import { apiFromEnv } from "./api-from-env.js";
import type { CliIo } from "./cli-io.js";
import { printJson } from "./format-table.js";
import { parseId } from "./webhooks-test.js";

/** `parley inbound create`: an inbound webhook posting into a room; prints its URL (once). */
export async function inboundCreate(
  io: CliIo,
  options: { room: string; name: string; avatarUrl?: string; json?: boolean },
): Promise<void> {
  const { api } = apiFromEnv(io.env);
  const { data } = await api("POST /api/admin/inbound-webhooks", {
    roomId: parseId(options.room, "--room"),
    displayName: options.name,
    avatarUrl: options.avatarUrl,
  });
  if (options.json) return printJson(io.out, data);
  io.out(
    `Created inbound webhook ${data.id} "${data.displayName}" posting into room ${data.roomId}`,
  );
  io.out(`  url:       ${data.url}`);
  io.out(`  Slack url: ${data.slackUrl}`);
  io.out("  The URL is its own credential and is shown only now: keep it secret.");
  io.out(
    `  Try it: curl -X POST -H 'content-type: application/json' -d '{"content":"hello"}' ${data.url}`,
  );
}
