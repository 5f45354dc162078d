import { setTimeout as sleep } from "node:timers/promises";
import type { DeliveryDetail, RequestInterface } from "@parley/client";
import { CliError } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";
import { EXIT } from "./exit-codes.js";

/**
 * Polls a delivery until its first attempt is recorded (a spinner shows the wait on a terminal),
 * then answers the delivery with that attempt.
 */
export async function waitForAttempt(
  io: CliIo,
  api: RequestInterface,
  ids: { id: number; deliveryId: number },
  timeoutSeconds: number,
): Promise<DeliveryDetail> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  const progress = io.progress(`waiting for delivery ${ids.deliveryId}'s first attempt`);
  try {
    for (;;) {
      const { data: delivery } = await api(
        "GET /api/admin/webhooks/{id}/deliveries/{deliveryId}",
        ids,
      );
      if (delivery.attemptHistory.length > 0) return delivery;
      if (Date.now() > deadline)
        throw new CliError(
          `delivery ${ids.deliveryId} was not attempted within ${timeoutSeconds}s (is the endpoint enabled and the server's dispatcher running?)`,
          { exitCode: EXIT.failed, code: "timeout" },
        );
      await sleep(250);
    }
  } finally {
    progress.stop();
  }
}

/** `Test delivery 7: SUCCESS (answered 204, 12 ms)`; sets exit status 1 unless it succeeded. */
export function reportAttempt(io: CliIo, what: string, delivery: DeliveryDetail): void {
  const last = delivery.attemptHistory.at(-1)!;
  const outcome = last.responseStatus === null ? last.error : `answered ${last.responseStatus}`;
  io.out(`${what} ${delivery.id}: ${delivery.status} (${outcome}, ${last.durationMs} ms)`);
  if (delivery.status !== "SUCCESS") process.exitCode = EXIT.failed;
}

export function parseTimeout(text: string | undefined): number {
  const seconds = Number(text ?? 30);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new CliError(`--timeout must be a number of seconds, got "${text}"`);
  return seconds;
}
