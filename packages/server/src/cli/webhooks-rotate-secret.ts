import { apiFromEnv } from "./api-from-env.js";
import { CliError } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";
import { printJson } from "./format-table.js";
import { parseId } from "./webhooks-test.js";

/**
 * `parley webhooks rotate-secret <id>`: a new signing secret (given, or generated), printed once;
 * the old one keeps signing for `--overlap` seconds (default 86400). For a
 * standard-webhooks-ed25519 endpoint, a new key pair: its public key is printed.
 */
export async function webhooksRotateSecret(
  io: CliIo,
  idText: string,
  options: { secret?: string; overlap?: string; json?: boolean },
): Promise<void> {
  const id = parseId(idText, "webhook id");
  let overlapSeconds: number | undefined;
  if (options.overlap !== undefined) {
    overlapSeconds = Number(options.overlap);
    if (!/^\d+$/.test(options.overlap.trim()) || overlapSeconds > 604_800)
      throw new CliError(
        `--overlap must be a whole number of seconds from 0 to 604800, got "${options.overlap}"`,
      );
  }
  const { api } = apiFromEnv(io.env);
  const { data } = await api("POST /api/admin/webhooks/{id}/rotate-secret", {
    id,
    ...(options.secret === undefined ? {} : { secret: options.secret }),
    ...(overlapSeconds === undefined ? {} : { overlapSeconds }),
  });
  if (options.json) return printJson(io.out, data);
  if ("publicKey" in data) {
    io.out(`Made a new ed25519 key pair for webhook ${id}.`);
    io.out(`  publicKey: ${data.publicKey}`);
    io.out(
      data.previousKeyExpiresAt === null
        ? "  the previous key stopped signing at once"
        : `  the previous key also signs (a second v1a entry) until ${data.previousKeyExpiresAt}`,
    );
    return;
  }
  io.out(`Rotated the secret of webhook ${id}.`);
  io.out(`  secret: ${data.secret}`);
  io.out("  (shown only now: store it with the receiver)");
  io.out(
    data.previousSecretExpiresAt === null
      ? "  the previous secret stopped signing at once"
      : `  the previous secret also signs until ${data.previousSecretExpiresAt}`,
  );
}
