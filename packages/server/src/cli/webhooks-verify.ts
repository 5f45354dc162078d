import { apiFromEnv } from "./api-from-env.js";
import { EXIT } from "./exit-codes.js";
import type { CliIo } from "./cli-io.js";
import { printJson } from "./format-table.js";
import { parseTimeout, reportAttempt, waitForAttempt } from "./wait-for-attempt.js";
import { parseId } from "./webhooks-test.js";

/**
 * `parley webhooks verify <id>`: sends the ownership check's WEBHOOK_VERIFICATION challenge again
 * (POST .../verify); with `--wait`, follows it until its first attempt is recorded and prints the
 * outcome and the endpoint's verification state.
 */
export async function webhooksVerify(
  io: CliIo,
  idText: string,
  options: { json?: boolean; wait?: boolean; timeout?: string },
): Promise<void> {
  const id = parseId(idText, "webhook id");
  const timeout = parseTimeout(options.timeout);
  const { api } = apiFromEnv(io.env);
  const { data: queued } = await api("POST /api/admin/webhooks/{id}/verify", { id });
  if (!options.wait) {
    if (options.json) return printJson(io.out, queued);
    return io.out(
      `Queued the ownership challenge (delivery ${queued.deliveryId}) to webhook ${id}.`,
    );
  }
  const delivery = await waitForAttempt(io, api, { id, deliveryId: queued.deliveryId }, timeout);
  const { data: webhook } = await api("GET /api/admin/webhooks/{id}", { id });
  if (options.json) {
    printJson(io.out, { ...delivery, verification: webhook.verification });
    if (webhook.verification !== "verified") process.exitCode = EXIT.failed;
    return;
  }
  reportAttempt(io, "Ownership challenge", delivery);
  io.out(`  verification: ${webhook.verification}`);
  if (webhook.verification !== "verified") process.exitCode = EXIT.failed;
}
