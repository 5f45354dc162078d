import { setTimeout as sleep } from "node:timers/promises";
import { apiFromEnv } from "./api-from-env.js";
import { CliError } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";
import { printJson } from "./format-table.js";

/**
 * `parley webhooks test <id>`: queues a WEBHOOK_TEST delivery; with `--wait`, follows it until
 * its first attempt is recorded and prints the outcome.
 */
export async function webhooksTest(
  io: CliIo,
  idText: string,
  options: { json?: boolean; wait?: boolean; timeout?: string },
): Promise<void> {
  const id = parseId(idText, "webhook id");
  const { api } = apiFromEnv(io.env);
  const { data: queued } = await api("POST /api/admin/webhooks/{id}/test", { id });
  if (!options.wait) {
    if (options.json) return printJson(io.out, queued);
    return io.out(`Queued test delivery ${queued.deliveryId} to webhook ${id}.`);
  }
  const deadline = Date.now() + Number(options.timeout ?? 30) * 1000;
  for (;;) {
    const { data: delivery } = await api("GET /api/admin/webhooks/{id}/deliveries/{deliveryId}", {
      id,
      deliveryId: queued.deliveryId,
    });
    const last = delivery.attemptHistory.at(-1);
    if (last !== undefined) {
      if (options.json) return printJson(io.out, delivery);
      const outcome = last.responseStatus === null ? last.error : `answered ${last.responseStatus}`;
      io.out(
        `Test delivery ${delivery.id}: ${delivery.status} (${outcome}, ${last.durationMs} ms)`,
      );
      if (delivery.status !== "SUCCESS") process.exitCode = 1;
      return;
    }
    if (Date.now() > deadline) {
      throw new CliError(`test delivery ${queued.deliveryId} was not attempted in time`);
    }
    await sleep(250);
  }
}

export function parseId(text: string, what: string): number {
  if (!/^[1-9]\d{0,14}$/.test(text))
    throw new CliError(`${what} must be a positive integer, got "${text}"`);
  return Number(text);
}
