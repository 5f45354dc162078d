import type { InboundWebhook, InboundWebhookWithToken } from "@parley/client/browser";
import { paginate } from "../api.js";
import {
  clearError,
  errorBox,
  flashFailure,
  showError,
  type View,
  type ViewContext,
} from "../context.js";
import {
  badge,
  busy,
  confirmButton,
  copyField,
  h,
  replaceChildren,
  row,
  table,
  time,
} from "../dom.js";

/**
 * The ingest URL of a webhook just created or rotated. Kept in memory only, for the one page
 * that shows it: leaving the page or reloading drops it, as the API never answers it again.
 */
let revealed: InboundWebhookWithToken | undefined;

export const inboundView: View = async (context) => {
  const { root } = context;
  root.append(h("h1", null, "Inbound webhooks"));
  if (revealed) {
    root.append(revealPanel(revealed));
    revealed = undefined;
  }
  const listHolder = h("div", { class: "list" }, h("p", null, "Loading…"));
  root.append(listHolder);
  root.append(createForm(context));

  let webhooks: InboundWebhook[];
  try {
    webhooks = await paginate.all(context.api, "GET /api/admin/inbound-webhooks", { limit: 200 });
  } catch (error) {
    const message = context.fail(error);
    if (message !== undefined) replaceChildren(listHolder, h("p", { class: "error" }, message));
    return;
  }
  if (webhooks.length === 0) {
    replaceChildren(listHolder, h("p", { class: "empty" }, "No inbound webhooks yet."));
    return;
  }
  replaceChildren(
    listHolder,
    table(
      ["ID", "Room", "Display name", "State", "Token", "Created", "Actions"],
      webhooks.map((webhook) =>
        row(
          [
            String(webhook.id),
            String(webhook.roomId),
            h(
              "span",
              { class: "sender" },
              // No avatar image: the page loads images from Parley only (img-src 'self').
              h("span", { class: "display-name" }, webhook.displayName),
            ),
            webhook.enabled ? badge("enabled") : badge("disabled"),
            h(
              "code",
              { class: "token-hint", title: "the token's last 8 characters" },
              `…${webhook.tokenLast8}`,
            ),
            time(webhook.createdAt),
            h("span", { class: "actions" }, actions(context, webhook)),
          ],
          { "data-inbound-id": webhook.id },
        ),
      ),
      { id: "inbound-webhooks", class: "data responsive" },
    ),
  );
};

function actions(context: ViewContext, webhook: InboundWebhook): HTMLElement[] {
  const reload = (): void => context.navigate("/admin/inbound");
  const toggle = h(
    "button",
    { type: "button", class: "secondary" },
    webhook.enabled ? "Disable" : "Enable",
  );
  toggle.addEventListener("click", () =>
    busy(toggle, async () => {
      try {
        const { data } = await context.api("PATCH /api/admin/inbound-webhooks/{id}", {
          id: webhook.id,
          enabled: !webhook.enabled,
        });
        context.flash(
          `Inbound webhook “${data.displayName}” ${data.enabled ? "enabled" : "disabled"}.`,
        );
        reload();
      } catch (error) {
        flashFailure(context, error);
      }
    }),
  );
  const rotate = confirmButton(
    "Rotate token",
    "The current URL stops working at once. Rotate?",
    async () => {
      try {
        const { data } = await context.api("POST /api/admin/inbound-webhooks/{id}/rotate-token", {
          id: webhook.id,
        });
        revealed = data;
        context.flash(`New token for “${data.displayName}”: the old URL no longer works.`);
        reload();
      } catch (error) {
        flashFailure(context, error);
      }
    },
  );
  const remove = confirmButton("Delete", "Delete this inbound webhook?", async () => {
    try {
      await context.api("DELETE /api/admin/inbound-webhooks/{id}", { id: webhook.id });
      context.flash(`Inbound webhook “${webhook.displayName}” deleted.`);
      reload();
    } catch (error) {
      flashFailure(context, error);
    }
  });
  return [toggle, rotate, remove];
}

function revealPanel(webhook: InboundWebhookWithToken): HTMLElement {
  const panel = h(
    "section",
    { class: "reveal", id: "token-reveal", "aria-labelledby": "token-reveal-title" },
    h("h2", { id: "token-reveal-title" }, `Ingest URLs of “${webhook.displayName}”`),
    h(
      "p",
      { class: "warning" },
      "This is the only time the URLs are shown: copy them now. The token in them is the only ",
      `credential, so anyone who has it can post to room ${webhook.roomId}. Store it like a `,
      "password; if it leaks, rotate the token.",
    ),
    copyField("ingest-url", "Ingest URL", webhook.url),
    h(
      "p",
      { class: "hint", id: "ingest-url-hint" },
      "For Parley's own format: ",
      h("code", null, '{"content": "…"}'),
      ".",
    ),
    copyField("slack-url", "Slack-compatible URL", webhook.slackUrl),
    h(
      "p",
      { class: "hint", id: "slack-url-hint" },
      "For tools that post Slack incoming-webhook payloads: ",
      h("code", null, '{"text": "…"}'),
      " (with attachments or blocks).",
    ),
  );
  const done = h("button", { type: "button", class: "secondary" }, "I have stored it");
  done.addEventListener("click", () => panel.remove());
  panel.append(h("div", { class: "buttons" }, done));
  return panel;
}

function createForm(context: ViewContext): HTMLElement {
  const error = errorBox("inbound-form-error");
  const roomId = h("input", { id: "inbound-room", name: "roomId", inputmode: "numeric" });
  const displayName = h("input", { id: "inbound-name", name: "displayName", autocomplete: "off" });
  const avatarUrl = h("input", {
    id: "inbound-avatar",
    name: "avatarUrl",
    type: "url",
    placeholder: "https://… (optional)",
    autocomplete: "off",
  });
  const submit = h("button", { type: "submit" }, "Create inbound webhook");
  const form = h(
    "form",
    {
      id: "inbound-form",
      class: "card",
      novalidate: true,
      "aria-labelledby": "inbound-form-title",
    },
    h("h2", { id: "inbound-form-title" }, "New inbound webhook"),
    error,
    h("label", { for: "inbound-room" }, "Room ID"),
    roomId,
    h("label", { for: "inbound-name" }, "Display name"),
    displayName,
    h("label", { for: "inbound-avatar" }, "Avatar URL"),
    avatarUrl,
    h("div", { class: "buttons" }, submit),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearError(error);
    const room = Number(roomId.value.trim());
    if (!Number.isInteger(room) || room < 1) {
      showError(error, "The room ID is a positive whole number.");
      return;
    }
    void busy(submit, async () => {
      try {
        const avatar = avatarUrl.value.trim();
        const { data } = await context.api("POST /api/admin/inbound-webhooks", {
          roomId: room,
          displayName: displayName.value,
          ...(avatar === "" ? {} : { avatarUrl: avatar }),
        });
        revealed = data;
        context.flash(`Inbound webhook “${data.displayName}” created.`);
        context.navigate("/admin/inbound");
      } catch (failure) {
        showError(error, context.fail(failure));
      }
    });
  });
  return form;
}
