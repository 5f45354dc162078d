import { apiFromEnv } from "./api-from-env.js";
import { EXIT } from "./exit-codes.js";
import type { CliIo } from "./cli-io.js";
import { printJson } from "./format-table.js";
import { parseTimeout, reportAttempt, waitForAttempt } from "./wait-for-attempt.js";
import { parseId } from "./webhooks-test.js";

/**
 * `parley webhooks redeliver <deliveryId>` (or `<id> <deliveryId>`, the endpoint named too):
 * queues a new delivery with the same body bytes; with `--wait`, follows it to its first attempt.
 */
export async function webhooksRedeliver(
  io: CliIo,
  firstText: string,
  secondText: string | undefined,
  options: { json?: boolean; wait?: boolean; timeout?: string },
): Promise<void> {
  const webhookGiven = secondText === undefined ? undefined : parseId(firstText, "webhook id");
  const deliveryId = parseId(secondText ?? firstText, "delivery id");
  const timeout = parseTimeout(options.timeout);
  const { api } = apiFromEnv(io.env);
  const queued =
    webhookGiven === undefined
      ? (await api("POST /api/admin/deliveries/{deliveryId}/redeliver", { deliveryId })).data
      : {
          webhookId: webhookGiven,
          ...(
            await api("POST /api/admin/webhooks/{id}/deliveries/{deliveryId}/redeliver", {
              id: webhookGiven,
              deliveryId,
            })
          ).data,
        };
  const id = queued.webhookId;
  if (!options.wait) {
    if (options.json) return printJson(io.out, queued);
    return io.out(
      `Queued delivery ${queued.deliveryId} to webhook ${id}: the body of delivery ${deliveryId}, sent again.`,
    );
  }
  const delivery = await waitForAttempt(io, api, { id, deliveryId: queued.deliveryId }, timeout);
  if (options.json) {
    printJson(io.out, delivery);
    if (delivery.status !== "SUCCESS") process.exitCode = EXIT.failed;
    return;
  }
  reportAttempt(io, "Redelivery", delivery);
}
