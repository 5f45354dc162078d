import type { Webhook } from "@parley/client/browser";
import { clearError, errorBox, showError, type ViewContext } from "../context.js";
import { busy, h } from "../dom.js";
import { isoFromLocal, localFromIso } from "./endpoint-operations.js";

/** Replay's own limit per call, as the API applies it. */
const REPLAY_LIMIT = 10_000;

/**
 * "Replay missed events since…": counts the events the endpoint's subscription hears and that
 * never went to it (a dry run of replay-missing), asks to confirm with that count, then replays
 * them and shows how many were queued.
 */
export function replayMissingPanel(context: ViewContext, webhook: Webhook): HTMLElement {
  const since = h("input", {
    id: "replay-since",
    name: "since",
    type: "datetime-local",
    required: true,
    value: localFromIso(new Date(Date.now() - 86_400_000).toISOString()),
  });
  const error = errorBox("replay-error");
  const count = h("button", { type: "submit" }, "Count missed events");
  const question = h("div", { id: "replay-confirm", hidden: true });
  const result = h("p", { id: "replay-result", role: "status" });
  const form = h(
    "form",
    { id: "replay-form", class: "inline-form", novalidate: true },
    h(
      "p",
      { class: "hint", id: "replay-hint" },
      "Sends every event since then that this endpoint's subscription (events and rooms) takes now and that never went to it: while it was disabled, filtered out by a room list since changed, or before it was created. Oldest first, each with the event ID it would have had. Events are kept as long as the delivery log.",
    ),
    error,
    h(
      "span",
      { class: "field" },
      h("label", { for: since.id }, "Missed since (your local time)"),
      since,
    ),
    count,
  );

  let pending: string | undefined;
  const closeQuestion = (): void => {
    question.hidden = true;
    question.replaceChildren();
    pending = undefined;
  };
  question.addEventListener("keydown", (key) => {
    if ((key as KeyboardEvent).key === "Escape") {
      closeQuestion();
      count.focus();
    }
  });

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearError(error);
    closeQuestion();
    result.textContent = "";
    const from = isoFromLocal(since.value);
    if (from === undefined) return showError(error, "Choose the date and time to replay from.");
    void busy(count, async () => {
      try {
        const {
          data: { queued: total },
        } = await context.api("POST /api/admin/webhooks/{id}/replay-missing", {
          id: webhook.id,
          since: from,
          dryRun: true,
        });
        if (total === 0) {
          result.textContent = "No missed event since then: nothing to replay.";
          return;
        }
        pending = from;
        const confirm = h(
          "button",
          { type: "button", class: "danger" },
          `Confirm: send ${total} ${total === 1 ? "event" : "events"}`,
        );
        const cancel = h("button", { type: "button", class: "secondary" }, "Cancel");
        cancel.addEventListener("click", () => {
          closeQuestion();
          count.focus();
        });
        confirm.addEventListener("click", () =>
          busy(confirm, async () => {
            if (pending === undefined) return;
            cancel.disabled = true;
            try {
              const { data } = await context.api("POST /api/admin/webhooks/{id}/replay-missing", {
                id: webhook.id,
                since: pending,
              });
              closeQuestion();
              result.textContent = `Queued ${data.queued} missed ${data.queued === 1 ? "event" : "events"}.${data.queued === REPLAY_LIMIT ? " That is the most one call queues: replay again for the rest." : ""}`;
              count.focus();
            } catch (failure) {
              closeQuestion();
              showError(error, context.fail(failure));
            }
          }),
        );
        question.append(
          h(
            "p",
            { id: "replay-question" },
            `${total} missed ${total === 1 ? "event" : "events"} since ${from.replace("T", " ").replace(/\.\d+Z$/, "Z")} will be sent${webhook.enabled ? "" : " (held while the endpoint is disabled)"}.`,
          ),
          h(
            "span",
            { class: "buttons", role: "group", "aria-labelledby": "replay-question" },
            confirm,
            cancel,
          ),
        );
        question.hidden = false;
        confirm.focus();
      } catch (failure) {
        showError(error, context.fail(failure));
      }
    });
  });
  return h(
    "details",
    { class: "edit", id: "replay-missing" },
    h("summary", null, "Replay missed events since…"),
    form,
    question,
    result,
  );
}
