import { expect, it, onTestFinished } from "vitest";
import type { ClaimedDelivery } from "../../../../../src/webhooks/outbound/delivery-engine/claim-deliveries.js";
import type { DeliveryQueue } from "../../../../../src/webhooks/outbound/delivery-engine/delivery-queue.js";
import { DeliveryDispatcher } from "../../../../../src/webhooks/outbound/delivery-engine/dispatcher.js";
import type { WebhookSender } from "../../../../../src/webhooks/outbound/transport/webhook-sender.js";
import { latch } from "../../../../helpers/latch.js";

const DUE_AT = 1_000_000;

const row: ClaimedDelivery = {
  id: 1,
  webhook_id: 1,
  event: "ADMIN_USER_DISABLED",
  body: "{}",
  status: "FAILED",
  attempts: 1,
  url: "https://example.test/hook",
  secret_ciphertext: "sealed",
  event_id: null,
  signature_scheme: "parley",
  headers_ciphertext: null,
  previous_secret_ciphertext: null,
  auth_ciphertext: null,
  tls_ciphertext: null,
  signing_key_ciphertext: null,
  previous_signing_key_ciphertext: null,
  send_at: null,
  lane: null,
  payload_format: "parley",
  trace_context: 0,
  trace_parent: null,
  trace_state: null,
};

it(
  "arms the retry timer for a row that fell due between its claim and the look-up of the next retry",
  { timeout: 5_000 },
  async () => {
    // A clock that moves one millisecond at every reading: the first claim reads DUE_AT - 1 and
    // finds nothing due; any later reading is at or past DUE_AT. (A timer that fires a millisecond
    // early leaves the dispatcher exactly here.) No sweep runs in the test.
    let clock = DUE_AT - 1;
    const sent = latch();
    let claimed = false;
    const queue: DeliveryQueue = {
      async claim({ now }) {
        if (now < DUE_AT || claimed) return [];
        claimed = true;
        return [row];
      },
      // As next-due-time.ts: the earliest next_attempt_at after `now`.
      nextDueTime: async (now) => (claimed || DUE_AT <= now ? null : DUE_AT),
      recordCircuit: async () => {},
      markVerified: async () => 0,
      record: async (attempts) =>
        attempts.map((a) => ({
          deliveryId: a.deliveryId,
          recorded: true,
          status: "SUCCESS",
          nextAttemptAt: null,
        })),
      expireSecrets: async () => 0,
    };
    const sender: WebhookSender = {
      async send() {
        sent.release();
        return {
          ok: true,
          startedAt: new Date(0),
          durationMs: 1,
          responseStatus: 204,
          responseBody: "",
          error: null,
        };
      },
      close: async () => undefined,
    };
    const dispatcher = new DeliveryDispatcher({
      settings: {
        workerId: "w",
        leaseMs: 10_000,
        concurrency: 2,
        perEndpointLimit: 2,
        policy: { maxAttempts: 5, backoffBaseMs: 100, backoffMaxMs: 1_000 },
        sweepIntervalMs: 600_000,
      },
      queue,
      sender,
      openSecret: () => "secret",
      onDeliveriesQueued: () => () => undefined,
      metrics: {
        attempt: () => undefined,
        finished: () => undefined,
        endpointDisabled: () => undefined,
        attemptsDelayed: () => undefined,
      },
      log: { info: () => undefined, warn: () => undefined, error: () => undefined },
      now: () => clock++,
      checkInvariants: true,
    });
    onTestFinished(() => dispatcher.stop());
    dispatcher.start();
    await sent.opened;
    await dispatcher.idle();
    expect(claimed).toBe(true);
  },
);
