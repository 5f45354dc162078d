import { apiFromEnv } from "./api-from-env.js";
import type { CliIo } from "./cli-io.js";
import { printJson } from "./format-table.js";
import { parseTimeout, reportAttempt, waitForAttempt } from "./wait-for-attempt.js";
import { parseId } from "./webhooks-test.js";

/**
 * `parley webhooks redeliver <id> <deliveryId>`: queues a new delivery with the same body bytes;
 * with `--wait`, follows it to its first attempt.
 */
export async function webhooksRedeliver(
  io: CliIo,
  idText: string,
  deliveryIdText: string,
  options: { json?: boolean; wait?: boolean; timeout?: string },
): Promise<void> {
  const id = parseId(idText, "webhook id");
  const deliveryId = parseId(deliveryIdText, "delivery id");
  const timeout = parseTimeout(options.timeout);
  const { api } = apiFromEnv(io.env);
  const { data: queued } = await api(
    "POST /api/admin/webhooks/{id}/deliveries/{deliveryId}/redeliver",
    { id, deliveryId },
  );
  if (!options.wait) {
    if (options.json) return printJson(io.out, queued);
    return io.out(
      `Queued delivery ${queued.deliveryId} to webhook ${id}: the body of delivery ${deliveryId}, sent again.`,
    );
  }
  const delivery = await waitForAttempt(io, api, { id, deliveryId: queued.deliveryId }, timeout);
  if (options.json) {
    printJson(io.out, delivery);
    if (delivery.status !== "SUCCESS") process.exitCode = 1;
    return;
  }
  reportAttempt(io, "Redelivery", delivery);
}
