import { apiFromEnv } from "./api-from-env.js";
import type { CliIo } from "./cli-io.js";
import { printJson } from "./format-table.js";
import { parseId } from "./webhooks-test.js";
import { inboundUrls } from "./inbound-urls.js";

/** `parley inbound create`: an inbound webhook posting into a room; prints its URLs (once). */
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
  for (const line of inboundUrls(data)) io.out(line);
  io.out(
    "  GitHub and Stripe: set a signing secret (PATCH /api/admin/inbound-webhooks/{id}) and give",
  );
  io.out("  them the same secret; docs/inbound-webhooks.md has the steps.");
  io.out(
    `  Try it: curl -X POST -H 'content-type: application/json' -d '{"content":"hello"}' ${data.url}`,
  );
}
