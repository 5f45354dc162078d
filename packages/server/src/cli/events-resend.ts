import { apiFromEnv } from "./api-from-env.js";
import { CliError } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";
import { printJson } from "./format-table.js";

/**
 * `parley events resend <eventId>`: sends an event again, same bytes and event id, to the
 * endpoint that got it (an event id is unique per event and endpoint), as a new delivery.
 */
export async function eventsResend(
  io: CliIo,
  eventIdText: string,
  options: { json?: boolean },
): Promise<void> {
  const eventId = eventIdText.trim();
  if (!/^evt_[0-9A-Za-z]{1,60}$/.test(eventId))
    throw new CliError(`event id must look like evt_01J..., got "${eventIdText}"`);
  const { api } = apiFromEnv(io.env);
  const { data } = await api("POST /api/admin/events/{eventId}/resend", { eventId });
  if (options.json) return printJson(io.out, data);
  io.out(
    `Queued delivery ${data.deliveryId} to webhook ${data.webhookId}: event ${eventId}, sent again.`,
  );
}
