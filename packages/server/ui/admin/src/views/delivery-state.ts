import type { DeliverySummary } from "@parley/client/browser";
import { badge, h, time, type Child } from "../dom.js";
import { inWords } from "./in-words.js";

/**
 * A delivery's state as an operator reads it (docs/admin-ui.md, "Delivery states"): HELD while
 * its endpoint is disabled (the API's status stays PENDING or FAILED, with `held`), attempt N of
 * M, the next attempt in words, and EXHAUSTED as final.
 */
export function deliveryBadge(delivery: DeliverySummary): HTMLSpanElement {
  return delivery.held ? badge("HELD", "held") : badge(delivery.status);
}

/** "2 of 5": attempts made of those it gets. */
export function attemptsOf(delivery: DeliverySummary): string {
  return `${delivery.attempts} of ${delivery.maxAttempts}`;
}

/** The next attempt, in words: when, which one, or why there is none. */
export function nextAttempt(delivery: DeliverySummary, now = Date.now()): Child[] {
  if (delivery.status === "SUCCESS") return ["none: delivered"];
  if (delivery.status === "EXHAUSTED")
    return [
      h("span", { class: "final" }, `none: final, all ${delivery.maxAttempts} attempts failed`),
    ];
  if (delivery.held) return ["held until the endpoint is enabled"];
  if (delivery.nextAttemptAt === null) return ["—"];
  const at = Date.parse(delivery.nextAttemptAt);
  const which = `attempt ${delivery.attempts + 1} of ${delivery.maxAttempts}`;
  return at <= now
    ? [`${which}, due now`]
    : [`${which} ${inWords(at, now)} (`, time(delivery.nextAttemptAt), ")"];
}

/** One sentence on where the delivery stands, for its page. */
export function stateSentence(delivery: DeliverySummary): string {
  const { attempts, maxAttempts } = delivery;
  if (delivery.status === "SUCCESS")
    return `Delivered: the receiver accepted attempt ${attempts} of ${maxAttempts}.`;
  if (delivery.status === "EXHAUSTED")
    return `Final: all ${maxAttempts} attempts failed and Parley will not try again. Redeliver it, or recover the time range, to send it again.`;
  if (delivery.held)
    return attempts === 0
      ? "Held: its endpoint is disabled. It goes out when the endpoint is enabled again."
      : `Held after attempt ${attempts} of ${maxAttempts} failed: its endpoint is disabled. The next attempt is made when the endpoint is enabled again.`;
  if (delivery.status === "PENDING") return "Queued: its first attempt is due.";
  return `Attempt ${attempts} of ${maxAttempts} failed; Parley tries again.`;
}
