import {
  EVENT_NAMES,
  WEBHOOK_TEST,
  type DeliveryDetail,
  type TestWebhookParams,
  type Webhook,
} from "@parley/client/browser";
import { isStatus } from "../api.js";
import { flashFailure, link, type ViewContext } from "../context.js";
import { busy, h, replaceChildren } from "../dom.js";
import { pollWhileShown } from "../poll.js";
import { attemptsOf, deliveryBadge, stateSentence } from "./delivery-state.js";

/** What a test may send: WEBHOOK_TEST or a subscribable event (never the ownership challenge). */
type TestEvent = NonNullable<TestWebhookParams["event"]>;
const TEST_EVENTS: TestEvent[] = [WEBHOOK_TEST, ...EVENT_NAMES];

/** What came of the test delivery so far: its state, and the receiver's last answer. */
function outcome(webhookId: number, delivery: DeliveryDetail): (Node | string)[] {
  const last = delivery.attemptHistory.at(-1);
  const answer =
    last === undefined
      ? []
      : [
          " ",
          last.responseStatus === null
            ? `Last attempt: ${last.error ?? "no answer"}.`
            : `The receiver answered ${last.responseStatus} in ${last.durationMs} ms${last.error !== null && last.responseStatus >= 300 ? ` (${last.error})` : ""}.`,
        ];
  return [
    link(`/admin/webhooks/${webhookId}/deliveries/${delivery.id}`, `Test delivery #${delivery.id}`),
    ` (${delivery.event}, attempt ${attemptsOf(delivery)}): `,
    deliveryBadge(delivery),
    " ",
    stateSentence(delivery),
    ...answer,
  ];
}

/**
 * "Send test event" with a choice of event: WEBHOOK_TEST, or any event of the catalogue with its
 * sample data (POST .../test {event}). The result line follows the delivery until it is settled
 * (delivered, exhausted, or held), so the operator sees the receiver's answer without leaving.
 */
export function testEventControls(
  context: ViewContext,
  webhook: Webhook,
  sent: () => void,
): HTMLElement[] {
  const choice = h(
    "select",
    { id: "test-event", name: "event" },
    TEST_EVENTS.map((event) => h("option", { value: event }, event)),
  );
  const button = h("button", { type: "button", class: "secondary" }, "Send test event");
  const result = h("p", { id: "test-result", role: "status", "aria-live": "polite" });
  let current = 0;
  button.addEventListener("click", () =>
    busy(button, async () => {
      try {
        const event = choice.value as TestEvent;
        const { data } = await context.api("POST /api/admin/webhooks/{id}/test", {
          id: webhook.id,
          ...(event === WEBHOOK_TEST ? {} : { event }),
        });
        sent();
        const following = ++current;
        replaceChildren(
          result,
          `Test delivery #${data.deliveryId} (${event}) queued${data.held ? ": held until the endpoint is enabled" : ", waiting for the receiver"}…`,
        );
        const ids = { id: webhook.id, deliveryId: data.deliveryId };
        pollWhileShown(
          result,
          async () => {
            if (following !== current) return false;
            const { data: delivery } = await context.api(
              "GET /api/admin/webhooks/{id}/deliveries/{deliveryId}",
              ids,
            );
            if (following !== current) return false;
            replaceChildren(result, ...outcome(webhook.id, delivery));
            // Settled: delivered, out of attempts, or waiting for the endpoint to be enabled.
            return !(
              delivery.status === "SUCCESS" ||
              delivery.status === "EXHAUSTED" ||
              delivery.held
            );
          },
          (error) => !isStatus(error, 401) || context.fail(error) !== undefined,
          500,
        );
      } catch (error) {
        flashFailure(context, error);
      }
    }),
  );
  return [
    h("span", { class: "field test-event" }, h("label", { for: choice.id }, "Test event"), choice),
    button,
    result,
  ];
}
