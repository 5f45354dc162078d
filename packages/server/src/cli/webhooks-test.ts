import { EVENT_NAMES, WEBHOOK_TEST } from "@parley/client";
import { apiFromEnv } from "./api-from-env.js";
import { CliError } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";
import { printJson } from "./format-table.js";
import { parseChoice } from "./parse-choice.js";
import { parseTimeout, reportAttempt, waitForAttempt } from "./wait-for-attempt.js";

/**
 * `parley webhooks test <id>`: queues a WEBHOOK_TEST delivery (or, with `--event`, that event's
 * sample); with `--wait`, follows it until
 * its first attempt is recorded and prints the outcome.
 */
export async function webhooksTest(
  io: CliIo,
  idText: string,
  options: { event?: string; json?: boolean; wait?: boolean; timeout?: string },
): Promise<void> {
  const id = parseId(idText, "webhook id");
  const event =
    options.event === undefined
      ? undefined
      : parseChoice(options.event, [...EVENT_NAMES, WEBHOOK_TEST] as const, "--event");
  const timeout = parseTimeout(options.timeout);
  const { api } = apiFromEnv(io.env);
  const { data: queued } = await api("POST /api/admin/webhooks/{id}/test", {
    id,
    ...(event === undefined ? {} : { event }),
  });
  if (!options.wait) {
    if (options.json) return printJson(io.out, queued);
    return io.out(
      `Queued test delivery ${queued.deliveryId} to webhook ${id}` +
        (queued.held ? " (held: the endpoint is disabled)." : "."),
    );
  }
  const delivery = await waitForAttempt(io, api, { id, deliveryId: queued.deliveryId }, timeout);
  if (options.json) {
    printJson(io.out, delivery);
    if (delivery.status !== "SUCCESS") process.exitCode = 1;
    return;
  }
  reportAttempt(io, "Test delivery", delivery);
}

export function parseId(text: string, what: string): number {
  if (!/^[1-9]\d{0,14}$/.test(text))
    throw new CliError(`${what} must be a positive integer, got "${text}"`);
  return Number(text);
}
