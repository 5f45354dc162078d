import { apiFromEnv } from "./api-from-env.js";
import type { CliIo } from "./cli-io.js";
import { printJson } from "./format-table.js";
import { inboundUrls } from "./inbound-urls.js";
import { parseId } from "./webhooks-test.js";

/**
 * `parley inbound rotate-token <id>`: a new token (and so new URLs), printed once; the old URLs
 * stop working at once.
 */
export async function inboundRotateToken(
  io: CliIo,
  idText: string,
  options: { json?: boolean },
): Promise<void> {
  const id = parseId(idText, "inbound webhook id");
  const { api } = apiFromEnv(io.env);
  const { data } = await api("POST /api/admin/inbound-webhooks/{id}/rotate-token", { id });
  if (options.json) return printJson(io.out, data);
  io.out(
    `Rotated the token of inbound webhook ${id} "${data.displayName}": the old URLs stopped working.`,
  );
  for (const line of inboundUrls(data)) io.out(line);
}

/** `parley inbound enable|disable <id>`: a disabled inbound webhook's URLs answer 404. */
export function inboundSetEnabled(enabled: boolean) {
  return async (io: CliIo, idText: string, options: { json?: boolean }): Promise<void> => {
    const id = parseId(idText, "inbound webhook id");
    const { api } = apiFromEnv(io.env);
    const { data } = await api("PATCH /api/admin/inbound-webhooks/{id}", { id, enabled });
    if (options.json) return printJson(io.out, data);
    io.out(
      enabled
        ? `Enabled inbound webhook ${id} "${data.displayName}": its URLs post again.`
        : `Disabled inbound webhook ${id} "${data.displayName}": its URLs are refused until it is enabled.`,
    );
  };
}

/** `parley inbound delete <id>`: its URLs stop working; the messages it posted stay. */
export async function inboundDelete(
  io: CliIo,
  idText: string,
  options: { json?: boolean },
): Promise<void> {
  const id = parseId(idText, "inbound webhook id");
  const { api } = apiFromEnv(io.env);
  await api("DELETE /api/admin/inbound-webhooks/{id}", { id });
  if (options.json) return printJson(io.out, { id, deleted: true });
  io.out(`Deleted inbound webhook ${id}; its URLs no longer work.`);
}
