// What the endpoint list and an endpoint's page share: the enable/disable, test and delete
// buttons, the one-time reveal of a secret just set, and the Community edition's notice.
import type { Webhook } from "@parley/client/browser";
import { flashFailure, type ViewContext } from "../context.js";
import { busy, confirmButton, copyField, h, time } from "../dom.js";

/**
 * A secret just set on an endpoint (create, or a new one on edit). Kept in memory only, for the
 * one page shown next: the API never returns a secret, so this is the only time it can be copied.
 */
let revealed:
  | { webhookId: number; name: string; secret: string; previousExpiresAt?: string | null }
  | undefined;

/**
 * Keeps a secret just set (by the form, or by a rotation with the end of the previous secret's
 * overlap) for the next page, which shows it once.
 */
export function revealSecret(
  webhookId: number,
  name: string,
  secret: string,
  previousExpiresAt?: string | null,
): void {
  revealed =
    previousExpiresAt === undefined
      ? { webhookId, name, secret }
      : { webhookId, name, secret, previousExpiresAt };
}

/** The reveal panel for `webhookId`, if its secret was just set; shown once. */
export function takeRevealedSecret(webhookId?: number): HTMLElement | null {
  if (!revealed || (webhookId !== undefined && revealed.webhookId !== webhookId)) return null;
  const { name, secret, previousExpiresAt } = revealed;
  revealed = undefined;
  const panel = h(
    "section",
    { class: "reveal", id: "secret-reveal", "aria-labelledby": "secret-reveal-title" },
    h("h2", { id: "secret-reveal-title" }, `Signing secret of “${name}”`),
    h(
      "p",
      { class: "warning" },
      "This is the only time the secret is shown: copy it now and store it with the receiver, ",
      "which needs it to verify each delivery's X-Webhook-Signature-256. Parley never shows it again; ",
      "if it is lost, set a new one by editing the endpoint.",
    ),
    copyField("webhook-secret-value", "Secret", secret),
    previousExpiresAt === undefined
      ? null
      : h(
          "p",
          { id: "previous-secret-expiry" },
          previousExpiresAt === null
            ? "The previous secret stopped signing at once."
            : [
                "The previous secret also signs every delivery until ",
                time(previousExpiresAt),
                ": deploy the new one to the receiver before then.",
              ],
        ),
  );
  const done = h("button", { type: "button", class: "secondary" }, "I have stored it");
  done.addEventListener("click", () => panel.remove());
  panel.append(h("div", { class: "buttons" }, done));
  return panel;
}

/** The Community edition answers 403 enterprise_required on every outbound webhook route. */
export function enterpriseNotice(): HTMLElement {
  return h(
    "div",
    { class: "notice", id: "enterprise-required", role: "note" },
    h("h2", null, "Outbound webhooks need the Enterprise edition"),
    h(
      "p",
      null,
      "This server runs the Community edition, where outbound webhooks are turned off. ",
      "Inbound webhooks work in every edition. Set ",
      h("code", null, "PARLEY_EDITION=enterprise"),
      " to use outbound webhooks.",
    ),
  );
}

/** Enable/disable for one webhook; `done` runs with the updated webhook. */
export function toggleButton(
  context: ViewContext,
  webhook: Webhook,
  done: (updated: Webhook) => void,
): HTMLButtonElement {
  const button = h(
    "button",
    { type: "button", class: "secondary" },
    webhook.enabled ? "Disable" : "Enable",
  );
  button.addEventListener("click", () =>
    busy(button, async () => {
      try {
        const { data } = await context.api("PATCH /api/admin/webhooks/{id}", {
          id: webhook.id,
          data: { enabled: !webhook.enabled },
        });
        context.flash(`Webhook “${data.name}” ${data.enabled ? "enabled" : "disabled"}.`);
        done(data);
      } catch (error) {
        flashFailure(context, error);
      }
    }),
  );
  return button;
}

/** Sends the ownership check's challenge again (POST .../verify). */
export function verifyButton(
  context: ViewContext,
  webhook: Webhook,
  done?: (deliveryId: number) => void,
): HTMLButtonElement {
  const button = h("button", { type: "button", class: "secondary" }, "Verify ownership");
  button.addEventListener("click", () =>
    busy(button, async () => {
      try {
        const { data } = await context.api("POST /api/admin/webhooks/{id}/verify", {
          id: webhook.id,
        });
        context.flash(
          `Ownership challenge sent to “${webhook.name}” as delivery ${data.deliveryId}: it is verified once the receiver echoes it.`,
        );
        done?.(data.deliveryId);
      } catch (error) {
        flashFailure(context, error);
      }
    }),
  );
  return button;
}

/** Queues a WEBHOOK_TEST delivery to one webhook. */
export function testButton(
  context: ViewContext,
  webhook: Webhook,
  done?: (deliveryId: number) => void,
): HTMLButtonElement {
  const button = h("button", { type: "button", class: "secondary" }, "Send test event");
  button.addEventListener("click", () =>
    busy(button, async () => {
      try {
        const { data } = await context.api("POST /api/admin/webhooks/{id}/test", {
          id: webhook.id,
        });
        context.flash(`Test event queued for “${webhook.name}” as delivery ${data.deliveryId}.`);
        done?.(data.deliveryId);
      } catch (error) {
        flashFailure(context, error);
      }
    }),
  );
  return button;
}

export function deleteButton(
  context: ViewContext,
  webhook: Webhook,
  done: () => void,
): HTMLSpanElement {
  return confirmButton(
    "Delete",
    `Delete “${webhook.name}” and its delivery history? Its delivery log (every attempt) and its queued deliveries are deleted with it, for good.`,
    async () => {
      try {
        await context.api("DELETE /api/admin/webhooks/{id}", { id: webhook.id });
        context.flash(`Webhook “${webhook.name}” deleted.`);
        done();
      } catch (error) {
        flashFailure(context, error);
      }
    },
  );
}
