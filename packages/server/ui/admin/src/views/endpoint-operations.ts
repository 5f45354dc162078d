import type { Webhook } from "@parley/client/browser";
import { clearError, errorBox, showError, type ViewContext } from "../context.js";
import { busy, h, localDateTime } from "../dom.js";
import { revealSecret } from "./webhook-actions.js";

/** Recovery's own limit per call, as the API applies it. */
const RECOVER_LIMIT = 10_000;
const OVERLAPS: [seconds: number, label: string][] = [
  [0, "none: stop at once"],
  [3600, "1 hour"],
  [86400, "24 hours"],
  [604800, "7 days"],
];

/**
 * "Rotate secret": a new generated secret, shown once on the page that follows (with the copy
 * panel), the old one signing too for the chosen overlap.
 */
export function rotateSecretPanel(context: ViewContext, webhook: Webhook): HTMLElement {
  const overlap = h(
    "select",
    { id: "rotate-overlap", name: "overlapSeconds" },
    OVERLAPS.map(([seconds, label]) =>
      h("option", { value: seconds, selected: seconds === 86400 }, label),
    ),
  );
  const error = errorBox("rotate-error");
  const rotate = h("button", { type: "submit" }, "Rotate secret");
  const form = h(
    "form",
    { id: "rotate-form", class: "inline-form", "aria-describedby": "rotate-hint" },
    h(
      "p",
      { id: "rotate-hint", class: "hint" },
      "Parley generates a new secret and shows it once. Until the overlap ends the old one signs too, so the receiver keeps verifying while you deploy the new one.",
    ),
    error,
    h(
      "span",
      { class: "field" },
      h("label", { for: overlap.id }, "Old secret keeps signing for"),
      overlap,
    ),
    rotate,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearError(error);
    void busy(rotate, async () => {
      try {
        const { data } = await context.api("POST /api/admin/webhooks/{id}/rotate-secret", {
          id: webhook.id,
          overlapSeconds: Number(overlap.value),
        });
        if ("publicKey" in data) {
          context.flash(
            `“${webhook.name}” has a new key pair: give the receiver its new public key. ${
              data.previousKeyExpiresAt === null
                ? "The old key stopped signing at once."
                : `The old key signs too until ${new Date(data.previousKeyExpiresAt).toLocaleString()}.`
            }`,
          );
        } else {
          revealSecret(webhook.id, webhook.name, data.secret, data.previousSecretExpiresAt);
          context.flash(`The secret of “${webhook.name}” was rotated.`);
        }
        context.navigate(`/admin/webhooks/${webhook.id}`);
      } catch (failure) {
        showError(error, context.fail(failure));
      }
    });
  });
  return h(
    "details",
    { class: "edit", id: "rotate-secret" },
    h("summary", null, "Rotate secret"),
    form,
  );
}

/** A `datetime-local` value (the browser's local time) as an ISO instant. */
export function isoFromLocal(value: string): string | undefined {
  if (value === "") return undefined;
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? undefined : at.toISOString();
}

/** `datetime-local`'s format for an instant, in the browser's local time. */
export function localFromIso(iso: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return "";
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
}

/**
 * "Recover failed since…": counts what would be queued (a dry run of recover), asks to confirm
 * with that count, then calls recover and shows how many it queued.
 */
export function recoverPanel(context: ViewContext, webhook: Webhook): HTMLElement {
  const since = h("input", {
    id: "recover-since",
    name: "since",
    type: "datetime-local",
    required: true,
    value: localFromIso(new Date(Date.now() - 86_400_000).toISOString()),
  });
  const exhausted = h("input", {
    id: "recover-exhausted",
    type: "checkbox",
    name: "statuses",
    value: "EXHAUSTED",
    checked: true,
  });
  const failed = h("input", {
    id: "recover-failed",
    type: "checkbox",
    name: "statuses",
    value: "FAILED",
  });
  const error = errorBox("recover-error");
  const count = h("button", { type: "submit" }, "Count deliveries to recover");
  const question = h("div", { id: "recover-confirm", hidden: true });
  const result = h("p", { id: "recover-result", role: "status" });
  const form = h(
    "form",
    { id: "recover-form", class: "inline-form", novalidate: true },
    h(
      "p",
      { class: "hint", id: "recover-hint" },
      "Queues each failed event again, once, oldest first, with the same body and event ID, so receivers can drop repeats. The originals keep their history.",
    ),
    error,
    h(
      "span",
      { class: "field" },
      h("label", { for: since.id }, "Failed since (your local time)"),
      since,
    ),
    h(
      "fieldset",
      { class: "statuses" },
      h("legend", null, "Deliveries"),
      h("label", { class: "check", for: exhausted.id }, exhausted, "EXHAUSTED (no attempt left)"),
      h(
        "label",
        { class: "check", for: failed.id },
        failed,
        "FAILED (still retrying: sent now as well)",
      ),
    ),
    count,
  );

  question.addEventListener("keydown", (key) => {
    if ((key as KeyboardEvent).key === "Escape") {
      closeQuestion();
      count.focus();
    }
  });

  let pending: { since: string; statuses: ("FAILED" | "EXHAUSTED")[] } | undefined;
  const closeQuestion = (): void => {
    question.hidden = true;
    question.replaceChildren();
    pending = undefined;
  };

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearError(error);
    closeQuestion();
    result.textContent = "";
    const from = isoFromLocal(since.value);
    if (from === undefined) return showError(error, "Choose the date and time to recover from.");
    const statuses = [exhausted, failed]
      .filter((box) => box.checked)
      .map((box) => box.value as "FAILED" | "EXHAUSTED");
    if (statuses.length === 0) return showError(error, "Choose EXHAUSTED, FAILED or both.");
    void busy(count, async () => {
      try {
        // What recover would queue now, counted by the server (a dry run): one per event.
        const {
          data: { queued: total },
        } = await context.api("POST /api/admin/webhooks/{id}/recover", {
          id: webhook.id,
          since: from,
          statuses,
          dryRun: true,
        });
        if (total === 0) {
          result.textContent = `No ${statuses.join(" or ")} delivery since then: nothing to recover.`;
          return;
        }
        pending = { since: from, statuses };
        const confirm = h(
          "button",
          { type: "button", class: "danger" },
          `Confirm: queue ${total} ${total === 1 ? "delivery" : "deliveries"}`,
        );
        const cancel = h("button", { type: "button", class: "secondary" }, "Cancel");
        cancel.addEventListener("click", () => {
          closeQuestion();
          count.focus();
        });
        confirm.addEventListener("click", () =>
          busy(confirm, async () => {
            if (!pending) return;
            cancel.disabled = true;
            try {
              const { data } = await context.api("POST /api/admin/webhooks/{id}/recover", {
                id: webhook.id,
                since: pending.since,
                statuses: pending.statuses,
              });
              closeQuestion();
              result.textContent = `Queued ${data.queued} ${data.queued === 1 ? "delivery" : "deliveries"} again.${data.queued === RECOVER_LIMIT ? " That is the most one call queues: recover again for the rest." : ""}`;
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
            { id: "recover-question" },
            `${total} ${statuses.join(" or ")} ${total === 1 ? "delivery" : "deliveries"} since ${localDateTime(from)} (your time) will be queued again${webhook.enabled ? "" : " (held while the endpoint is disabled)"}.`,
          ),
          h(
            "span",
            { class: "buttons", role: "group", "aria-labelledby": "recover-question" },
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
    { class: "edit", id: "recover" },
    h("summary", null, "Recover failed since…"),
    form,
    question,
    result,
  );
}
