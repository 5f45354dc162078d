import { EVENT_NAMES } from "../../../../client/src/types/events.js";
import type { EventName } from "../../../../client/src/types/events.js";
import type { Webhook } from "../../../../client/src/types/api.js";
import { isStatus, paginate } from "../api.js";
import { clearError, errorBox, link, showError, type View, type ViewContext } from "../context.js";
import { badge, busy, confirmButton, h, replaceChildren, row, table, time } from "../dom.js";

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
        const message = context.fail(error);
        if (message !== undefined) context.flash(message, "error");
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
        const message = context.fail(error);
        if (message !== undefined) context.flash(message, "error");
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
    "Delete this webhook and drop its queued deliveries?",
    async () => {
      try {
        await context.api("DELETE /api/admin/webhooks/{id}", { id: webhook.id });
        context.flash(`Webhook “${webhook.name}” deleted.`);
        done();
      } catch (error) {
        const message = context.fail(error);
        if (message !== undefined) context.flash(message, "error");
      }
    },
  );
}

/** The subscribed events as tags: a few by name, then how many more. */
function eventTags(events: readonly string[]): HTMLElement {
  if (events.length === EVENT_NAMES.length) return h("span", { class: "muted" }, "all events");
  const shown = events.length > 3 ? events.slice(0, 2) : events;
  return h(
    "ul",
    { class: "tags", title: events.join(", ") },
    shown.map((event) => h("li", null, event)),
    shown.length < events.length ? h("li", { class: "more" }, `+${events.length - 2} more`) : null,
  );
}

export const webhooksView: View = async (context) => {
  const { root } = context;
  root.append(h("h1", null, "Outbound webhooks"));
  const listHolder = h("div", { class: "list", "aria-live": "polite" }, h("p", null, "Loading…"));
  root.append(listHolder);

  let webhooks: Webhook[];
  try {
    webhooks = await paginate.all(context.api, "GET /api/admin/webhooks", { limit: 200 });
  } catch (error) {
    if (isStatus(error, 403, "enterprise_required")) {
      replaceChildren(listHolder, enterpriseNotice());
      return;
    }
    const message = context.fail(error);
    if (message !== undefined) replaceChildren(listHolder, h("p", { class: "error" }, message));
    return;
  }

  const refresh = (): void => context.navigate("/admin/webhooks");
  if (webhooks.length === 0) {
    replaceChildren(listHolder, h("p", { class: "empty" }, "No webhooks yet: create one below."));
  } else {
    replaceChildren(
      listHolder,
      table(
        ["Name", "URL", "Events", "State", "Created", ""],
        webhooks.map((webhook) =>
          row(
            [
              link(`/admin/webhooks/${webhook.id}`, webhook.name),
              h("code", { class: "url" }, webhook.url),
              eventTags(webhook.events),
              webhook.enabled ? badge("enabled") : badge("disabled"),
              time(webhook.createdAt),
              h(
                "span",
                { class: "actions" },
                toggleButton(context, webhook, refresh),
                testButton(context, webhook),
                deleteButton(context, webhook, refresh),
              ),
            ],
            { "data-webhook-id": webhook.id },
          ),
        ),
        { id: "webhooks", class: "data" },
      ),
    );
  }

  root.append(createForm(context));
};

function createForm(context: ViewContext): HTMLElement {
  const error = errorBox("webhook-form-error");
  const name = h("input", {
    id: "webhook-name",
    name: "name",
    autocomplete: "off",
    maxlength: 200,
  });
  const url = h("input", {
    id: "webhook-url",
    name: "url",
    type: "url",
    placeholder: "https://example.com/parley",
    autocomplete: "off",
  });
  const secret = h("input", {
    id: "webhook-secret",
    name: "secret",
    autocomplete: "off",
    spellcheck: "false",
    "aria-describedby": "webhook-secret-hint",
  });
  const generate = h("button", { type: "button", class: "secondary" }, "Generate");
  generate.addEventListener("click", () => {
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    secret.value = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  });
  const enabled = h("input", {
    id: "webhook-enabled",
    name: "enabled",
    type: "checkbox",
    checked: true,
  });
  const eventBoxes = EVENT_NAMES.map((event) =>
    h("input", { type: "checkbox", name: "events", value: event, id: `event-${event}` }),
  );
  const all = h("button", { type: "button", class: "link" }, "Select all");
  all.addEventListener("click", () => {
    const every = eventBoxes.every((box) => box.checked);
    for (const box of eventBoxes) box.checked = !every;
  });
  const submit = h("button", { type: "submit" }, "Create webhook");

  const form = h(
    "form",
    {
      id: "webhook-form",
      class: "card",
      novalidate: true,
      "aria-labelledby": "webhook-form-title",
    },
    h("h2", { id: "webhook-form-title" }, "New webhook"),
    error,
    h("label", { for: "webhook-name" }, "Name"),
    name,
    h("label", { for: "webhook-url" }, "URL"),
    url,
    h("label", { for: "webhook-secret" }, "Secret"),
    h("span", { class: "inline" }, secret, generate),
    h(
      "small",
      { id: "webhook-secret-hint", class: "hint" },
      "16 to 1024 characters. Every delivery is signed with it (X-Webhook-Signature-256); it is never shown again.",
    ),
    h(
      "fieldset",
      { class: "events" },
      h("legend", null, "Events ", all),
      eventBoxes.map((box) =>
        h("label", { class: "check", for: box.id }, box, h("code", null, box.value)),
      ),
    ),
    h("label", { class: "check", for: "webhook-enabled" }, enabled, "Enabled"),
    h("div", { class: "buttons" }, submit),
  );

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearError(error);
    void busy(submit, async () => {
      try {
        // `url` is also the name of a request option: the body goes in `data`.
        const { data } = await context.api("POST /api/admin/webhooks", {
          data: {
            name: name.value,
            url: url.value.trim(),
            secret: secret.value,
            events: eventBoxes.filter((box) => box.checked).map((box) => box.value as EventName),
            enabled: enabled.checked,
          },
        });
        context.flash(`Webhook “${data.name}” created.`);
        context.navigate("/admin/webhooks");
      } catch (failure) {
        showError(error, context.fail(failure));
      }
    });
  });
  return form;
}
